"""Registry invariants the fault tests check after every crash or full disk."""

from __future__ import annotations

import json


def charge_covers(epsilon: float, mechanisms: str) -> None:
    """The mechanisms that drew fit the charge. Each one that replaced nothing counts fully
    (HTF's `in_place_of` replacements spend budget planned for other labels, so they are
    bounded by the charge rather than added). The rows need not add up to the charge: a run
    stopped before its draws has none, and HTF leaves the split budget of levels it never
    reaches unused — the charge (made before the data was read) stays either way."""
    rows = json.loads(mechanisms)
    own = sum(m["epsilon"] for m in rows if not m.get("in_place_of"))
    assert own <= epsilon + 1e-9, (own, epsilon)
