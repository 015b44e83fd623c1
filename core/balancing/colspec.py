"""The columns of a PP publication, described once (issue 28) and read by its three writers:
in memory (`core.balancing.publish`, pandas), streamed (`core.balancing.stream_publish`,
DuckDB) and on Spark (`core.balancing.spark_publish`). Each row of `column_spec` says a
column's name, its kind, its type in the CSV and how it is written, so the three paths give
the same header, in the same order, with the same spellings.

Nothing here touches privacy: it describes a table that is already the publication.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import pandas as pd

from core.balancing.names import SEEDED_MARKER, SEEDED_VALUE, SUBTABLE_COLUMN
from core.balancing.records import MISSING_LABEL

TRUE, FALSE = "true", "false"  # a boolean cell as DuckDB and Spark write it, and so pandas


class Kind(StrEnum):
    MARKER = "marker"  # seeded runs only, first: SEEDED_VALUE in every row
    SA = "sa"  # the perturbed sensitive attribute: its category label
    DECLARED = "declared"  # a column the owner declared publishable: unchanged
    SUBTABLE = "subtable"  # the sub-table id, 1-based, last


@dataclass(frozen=True)
class OutColumn:
    name: str
    kind: Kind
    type: str  # in the CSV: "text", "integer", or "as read" (a declared column's own type)
    written: str  # how a cell is written, in words

    @property
    def published(self) -> bool:
        """Part of the publication's table (the marker is added to its files only)."""
        return self.kind is not Kind.MARKER


WRITTEN = {
    Kind.MARKER: ("text", f"'{SEEDED_VALUE}' in every row: a seeded, reproducible demo"),
    Kind.SA: (
        "text",
        "the perturbed value's category label (missing as its own category "
        f"{MISSING_LABEL} when counted so)",
    ),  # fmt: skip
    Kind.DECLARED: (
        "as read",
        f"unchanged; a missing cell as {MISSING_LABEL}; a boolean as {TRUE}/{FALSE}",
    ),  # fmt: skip
    Kind.SUBTABLE: ("integer", "the record's sub-table, 1-based"),
}


def column_spec(sa: str, columns: Sequence[str], seeded: bool) -> tuple[OutColumn, ...]:
    """The publication's columns in order: the marker (seeded runs), the published input
    columns in table order (the SA among them, perturbed), then the sub-table id."""
    kinds = [(SEEDED_MARKER, Kind.MARKER)] if seeded else []
    kinds += [(str(c), Kind.SA if str(c) == sa else Kind.DECLARED) for c in columns]
    kinds.append((SUBTABLE_COLUMN, Kind.SUBTABLE))
    return tuple(OutColumn(name, kind, *WRITTEN[kind]) for name, kind in kinds)


def header(spec: Sequence[OutColumn], files: bool = True) -> list[str]:
    """The column names: of the files (with the marker), or of the table (`files=False`)."""
    return [c.name for c in spec if files or c.published]


def declared_cells(series: pd.Series) -> pd.Series:
    """A declared column as `Kind.DECLARED` writes it (pandas): booleans as true/false, a
    missing cell as MISSING_LABEL, everything else unchanged (and its dtype kept when nothing
    had to change)."""
    out = series
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.map({True: TRUE, False: FALSE}).astype(object)
    if series.dtype == object:
        bools = series.map(lambda v: isinstance(v, (bool, np.bool_)))
        if bools.any():
            out = series.where(~bools, series.map(lambda v: TRUE if v is True or v is np.True_
                                                  else FALSE))  # fmt: skip
    gaps = out.isna()
    if gaps.any():
        out = out.astype(object).where(~gaps, MISSING_LABEL)
    return out
