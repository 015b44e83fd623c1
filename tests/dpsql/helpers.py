"""The governed flow in miniature, for tests: refuse what needs no data, "charge" the
prepared cost (an accountant holding exactly it), run."""

from __future__ import annotations

from core.dpsql.service import Prepared, QueryResult, check_before_charge, run
from core.privacy import Accountant, Noise


def release_of(prepared: Prepared, engine, noise: Noise) -> QueryResult:
    check_before_charge(prepared, engine)
    return run(prepared, engine, Accountant(noise, budget=prepared.cost))
