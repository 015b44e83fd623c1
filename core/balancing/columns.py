"""Which columns a PP publication holds: the owner's decision, never a default.

PP randomizes the sensitive attribute (SA) only; every other published column is published
UNCHANGED and makes each record's row linkable to the person. So the published columns are the
SA plus exactly the columns the data owner declared publishable; the privacy-unit column (an id
of the person) never. There is no "drop these" list that would publish everything else.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.balancing.names import SUBTABLE_COLUMN
from core.errors import InputError


def published_columns(
    table_columns: Sequence[str],
    sa: str,
    unit_column: str | None,
    declared: Sequence[str] = (),
    requested: Sequence[str] | None = None,
) -> list[str]:
    """The columns to publish, in table order: the SA plus the owner's `declared` columns (or,
    when a caller such as an analyst asks for fewer, the `requested` subset of them).

    Raises a one-line InputError naming the column when a declared or requested column is not in
    the table, is the privacy-unit column, would clash with the added sub-table id column, or
    (for `requested`) was not declared by the owner."""
    columns = [str(c) for c in table_columns]
    if sa not in columns:
        raise InputError(
            f"sensitive attribute column '{sa}' not found. Columns: {', '.join(columns)}."
        )
    if sa == SUBTABLE_COLUMN:
        raise InputError(
            f"the sensitive attribute '{sa}' clashes with the sub-table id column PP adds; "
            "rename it first."
        )
    for col in declared:
        _check_one(col, columns, unit_column, "declared publishable")
    wanted = list(declared)
    if requested is not None:
        check_requested(sa, declared, requested)
        wanted = list(requested)
    chosen = {sa, *wanted}
    return [c for c in columns if c in chosen]


def check_requested(sa: str, declared: Sequence[str], requested: Sequence[str]) -> None:
    """Every requested column is the SA or one the owner declared publishable (no data read:
    a policy check made before anything is charged)."""
    allowed = set(declared) | {sa}
    for col in requested:
        if col not in allowed:
            raise InputError(
                f"column '{col}' may not be published: the data owner has not declared it "
                "publishable. Publish the sensitive attribute and declared columns only."
            )


def _check_one(col: str, columns: list[str], unit_column: str | None, role: str) -> None:
    if col not in columns:
        raise InputError(f"{role} column '{col}' not found. Columns: {', '.join(columns)}.")
    if unit_column is not None and col == unit_column:
        raise InputError(
            f"column '{col}' is the privacy-unit column (it identifies the person) and is never "
            "published; remove it from the published columns."
        )
    if col == SUBTABLE_COLUMN:
        raise InputError(
            f"column '{col}' clashes with the sub-table id column PP adds; rename it first."
        )


def parse_columns(text: str | None) -> list[str]:
    """`"a, b"` -> ["a", "b"] (the CLI's --columns); empty or None -> []."""
    return [c.strip() for c in (text or "").split(",") if c.strip()]
