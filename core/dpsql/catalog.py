"""The table catalogue: which registered tables are private (with their uid) and which public.

The privacy unit is never guessed: a private table is registered either with an explicit unit
column (`add_private`) or with the explicit choice "each row is one unit" (`add_private_rows`),
which adds a row-id column (`ROW_ID_COLUMN`) and records that it did so (`UnitSource.ROW`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import numpy as np
import pandas as pd

from core.data.loading import load_table
from core.errors import InputError

ROW_ID_COLUMN = "row_id"

UNIT_EXPLANATION = (
    "A privacy unit is whoever the guarantee protects: the query hides whether any one unit's "
    "rows are in the data. It is a column naming whose data each row is (a person, patient or "
    "customer id). If each row is a different person, say so and a row-id column is added."
)


class UnitSource(Enum):
    """Where a private table's privacy unit comes from (public tables: NONE)."""

    NONE = "none"  # public table
    COLUMN = "column"  # a column of the data, named by the owner
    ROW = "row"  # each row is its own unit; the catalogue added ROW_ID_COLUMN


@dataclass(frozen=True)
class TableSpec:
    """One registered table. `frame` holds its rows, or, for a table the engine scans where it
    lies (`source`, a Parquet file), a footer-built stand-in with its columns and the types a
    full load would give, so every check sees the same schema either way."""

    name: str
    frame: pd.DataFrame = field(repr=False)
    private: bool
    uid: str | None
    unit_source: UnitSource = UnitSource.NONE
    source: Path | None = None

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]


class Catalog:
    """Registered tables by (case-insensitive) name. Private tables declare their uid column."""

    def __init__(self) -> None:
        self._tables: dict[str, TableSpec] = {}

    def add_private(self, name: str, frame: pd.DataFrame, uid: str | None) -> TableSpec:
        """Register a private table whose privacy unit is the named column `uid` (explicit)."""
        if not uid:
            raise InputError(_no_unit_message(name, frame))
        if uid not in frame.columns:
            raise InputError(
                f"DPX-C011 table '{name}' has no privacy-unit column '{uid}'. Columns: "
                f"{', '.join(map(str, frame.columns))}. Fix: pass the right --uid column, "
                "or --row-is-unit if each row is one person."
            )
        return self._add(TableSpec(name, _clean(frame), True, uid, UnitSource.COLUMN))

    def add_private_rows(self, name: str, frame: pd.DataFrame) -> TableSpec:
        """Register a private table where each row is one privacy unit (the owner's explicit
        choice). Adds `ROW_ID_COLUMN` with ids unique across the whole catalogue, so a join
        between two such tables never pairs rows of different units as one unit."""
        if ROW_ID_COLUMN in frame.columns:
            raise InputError(
                f"DPX-C012 table '{name}' already has a column '{ROW_ID_COLUMN}'. Fix: name it "
                f"as the privacy unit (--uid {ROW_ID_COLUMN}) or rename it."
            )
        start = sum(len(t.frame) for t in self._tables.values() if t.unit_source is UnitSource.ROW)
        with_ids = frame.copy()
        with_ids.insert(0, ROW_ID_COLUMN, np.arange(start + 1, start + len(frame) + 1))
        return self._add(TableSpec(name, _clean(with_ids), True, ROW_ID_COLUMN, UnitSource.ROW))

    def add_public(self, name: str, frame: pd.DataFrame) -> TableSpec:
        return self._add(TableSpec(name, _clean(frame), False, None))

    def add_private_scan(self, name: str, schema: pd.DataFrame, uid: str, source: Path):
        """Register a private table that the engine reads where it lies (`source`), given
        `schema`: a stand-in frame with its columns and the dtypes a full load would give
        (`core.dpsql.parquet_schema.stand_in`: at most two rows built from the footer, used for
        their types only, never queried). The unit column must be among them."""
        self.add_private(name, schema, uid)  # the same checks as a loaded table
        spec = TableSpec(name, _clean(schema), True, uid, UnitSource.COLUMN, source)
        return self._add(spec)

    def add_file(
        self, name: str, path, uid: str | None, private: bool = True, row_is_unit: bool = False
    ) -> TableSpec:
        """Load a file and register it: public, private by `uid`, or private with one unit per
        row (`row_is_unit`); a private table with neither is refused, never guessed."""
        frame = load_table(path, name=name)
        if not private:
            return self.add_public(name, frame)
        if row_is_unit and uid:
            raise InputError(
                "DPX-C013 give either --uid COL or --row-is-unit, not both. Fix: keep --uid COL "
                "if a column says whose data each row is, else keep --row-is-unit."
            )
        return (
            self.add_private_rows(name, frame)
            if row_is_unit
            else self.add_private(name, frame, uid)
        )

    def _add(self, spec: TableSpec) -> TableSpec:
        if not spec.name.isidentifier():
            raise InputError(
                f"DPX-C014 table name '{spec.name}' is not a plain identifier. Fix: use "
                "letters, digits and underscores, e.g. orders."
            )
        self._tables[spec.name.lower()] = spec
        return spec

    def get(self, name: str) -> TableSpec | None:
        return self._tables.get(name.lower())

    def names(self) -> list[str]:
        return [t.name for t in self._tables.values()]

    def tables(self) -> list[TableSpec]:
        return list(self._tables.values())

    def uid_names(self) -> set[str]:
        return {t.uid for t in self._tables.values() if t.private and t.uid}


def unit_column_concerns(name: str, frame: pd.DataFrame, uid: str) -> list[str]:
    """Owner-side sanity checks of a chosen unit column (NOT PRIVATE: they read the data; show
    them to the data owner only). A unit column names a person per row: missing values drop
    those rows from every query, and very few distinct values mean few "people" hold many rows."""
    column = frame[uid]
    concerns = []
    missing = int(column.isna().sum())
    if missing:
        concerns.append(
            f"{name}.{uid}: {missing:,} of {len(frame):,} rows have no value; they belong to no "
            "unit and are left out of every query."
        )
    distinct = int(column.nunique(dropna=True))
    if len(frame) >= 20 and distinct <= max(2, len(frame) // 100):
        concerns.append(
            f"{name}.{uid}: only {distinct:,} distinct value(s) in {len(frame):,} rows; a unit "
            "column usually has one value per person. Is this really whose data each row is?"
        )
    return concerns


def _no_unit_message(name: str, frame: pd.DataFrame) -> str:
    columns = ", ".join(map(str, frame.columns))
    return (
        f"DPX-C010 table '{name}' has no privacy unit chosen. {UNIT_EXPLANATION} "
        f"Columns: {columns}. Fix: pass --uid COL naming whose data each row is, or "
        "--row-is-unit if each row is one person."
    )


def _clean(frame: pd.DataFrame) -> pd.DataFrame:
    """NaN and ±inf become NULL at load time (spec §2.4: they are NULL at row level).
    Categorical columns become plain values: DuckDB would load them as ENUM types whose
    category list (data, not schema) appears in type and error messages."""
    out = frame.copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(out[col].cat.categories.dtype)
        if pd.api.types.is_float_dtype(out[col]):
            values = out[col].to_numpy(dtype=float, na_value=np.nan)
            out[col] = np.where(np.isfinite(values), values, np.nan)
    return out
