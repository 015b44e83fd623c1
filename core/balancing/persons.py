"""People, not records: PP on a dataset whose unit column says whose records they are.

PP's claims are per record: the partition plan's discrete Laplace has sensitivity 2 because
neighbouring tables differ in one record's sensitive value, and (ρ1, ρ2) bounds what one
published record tells about its own value. A person with k records would move the plan's
counts by up to 2k and be described by k published records, so neither claim would hold for
the person. On such a dataset a PP publication therefore keeps **one record per person**,
chosen uniformly at random among that person's own records (the same rule as the location
tools' points-per-person bound, `core.spatial.persons.bound_points_per_person` with k = 1:
independent of everyone else's data), and drops rows without a person id. Then a person is one
record: the plan's sensitivity 2 and the (ρ1, ρ2) claim hold per person, and the published
table has one row per person kept.
"""

from __future__ import annotations

import pandas as pd

from core.errors import InputError
from core.privacy import Noise, PrivacyUnit, UnitKind
from core.spatial.persons import bound_points_per_person

ONE_RECORD_PER_PERSON = (
    "one record per person: each person's records are reduced to one, drawn uniformly from "
    "that person's own records (rows without a person id are dropped), so the claims per "
    "record hold per person"
)


def unit_words(unit: str | None) -> str:
    """The unit a PP publication protects, in the registry's words."""
    return "one record" if unit is None else f"one person (column {unit}; {ONE_RECORD_PER_PERSON})"


def pp_unit_words(unit: PrivacyUnit) -> str:
    """`unit_words` for a typed unit: a person column keeps one record per person; a dataset
    whose rows are each one person says so; otherwise one record."""
    if unit.kind is UnitKind.PERSON:
        return unit_words(unit.column)
    if unit.kind is UnitKind.ROW_IS_PERSON:
        return "one record (each row is one person)"
    return unit_words(None)


def one_record_per_person(frame: pd.DataFrame, unit: str | None, noise: Noise) -> pd.DataFrame:
    """`frame` with at most one record per distinct value of `unit` (see the module docstring);
    `frame` itself when there is no unit column (each row is one person)."""
    if unit is None:
        return frame
    if unit not in frame.columns:
        raise InputError(
            f"the dataset's unit column '{unit}' is not in the table. Fix: the owner registers "
            "the dataset again with its unit column (`dpx dataset add ... --uid COL`)."
        )
    keep = bound_points_per_person(frame[unit], 1, noise)
    return frame.loc[keep].reset_index(drop=True)
