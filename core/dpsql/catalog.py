"""The table catalogue: which registered tables are private (with their uid) and which public,
and each table's public schema.

Every check reads a table's schema from `TableSpec.schema` (a `core.data.declared.TableSchema`):
for a registered dataset the owner's declared schema (`add_declared`: the engine reads the file
in place, converting every value into its declared type, `core.data.relation`); for a frame
given directly (an upload or a file in owner mode) a schema inferred from the frame, labelled
`SchemaSource.INFERRED`. No check reads a private value's type, width or count.

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

from core.data.declared import (
    ColumnFact,
    ColumnType,
    SchemaSource,
    TableSchema,
    size_class,
)
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


# Row ids of "each row is one unit" tables read in place: table k's ids start above
# k * ROW_ID_STRIDE, so ids are unique across the catalogue without counting any table's rows
# (the largest size class is 10^12 rows).
ROW_ID_STRIDE = 10**13


@dataclass(frozen=True)
class TableSpec:
    """One registered table and its public `schema`. `frame` holds its rows when it was given
    as a frame; a table the engine reads in place has `source` (its file) and `declared` (the
    file's declared schema) instead, and no frame. With `UnitSource.ROW` the schema has the
    added row-id column first (ids start at `row_offset` + 1)."""

    name: str
    frame: pd.DataFrame | None = field(repr=False)
    private: bool
    uid: str | None
    unit_source: UnitSource = UnitSource.NONE
    source: Path | None = None
    declared: TableSchema | None = None
    row_offset: int = 0

    @property
    def schema(self) -> TableSchema:
        """The table as queries see it: the declared (or inferred) columns, the row id first
        for a table whose rows are units."""
        base = self.declared if self.declared is not None else schema_of_frame(self.frame)
        if self.unit_source is UnitSource.ROW and base.column(ROW_ID_COLUMN) is None:
            row_id = ColumnFact(ROW_ID_COLUMN, ColumnType.INTEGER, nullable=False)
            return TableSchema((row_id, *base.columns), base.max_rows, base.source)
        return base

    @property
    def columns(self) -> list[str]:
        return self.schema.names

    @property
    def in_place(self) -> bool:
        """Read by the engine where it lies (no frame in Python)."""
        return self.source is not None and self.frame is None


class Catalog:
    """Registered tables by (case-insensitive) name. Private tables declare their uid column."""

    def __init__(self) -> None:
        self._tables: dict[str, TableSpec] = {}

    def add_private(
        self, name: str, frame: pd.DataFrame, uid: str | None, declared: TableSchema | None = None
    ) -> TableSpec:
        """Register a private table whose privacy unit is the named column `uid` (explicit).
        `declared`: the registered dataset's schema (the engine converts the frame into it);
        without it the schema is inferred from the frame (owner mode, labelled)."""
        if not uid:
            raise InputError(_no_unit_message(name, [str(c) for c in frame.columns]))
        if uid not in frame.columns:
            raise InputError(
                f"DPX-C011 table '{name}' has no privacy-unit column '{uid}'. Columns: "
                f"{', '.join(map(str, frame.columns))}. Fix: pass the right --uid column, "
                "or --row-is-unit if each row is one person."
            )
        clean = _clean(frame)
        schema = _checked(name, declared, clean) if declared else schema_of_frame(clean)
        return self._add(TableSpec(name, clean, True, uid, UnitSource.COLUMN, declared=schema))

    def add_private_rows(
        self, name: str, frame: pd.DataFrame, declared: TableSchema | None = None
    ) -> TableSpec:
        """Register a private table where each row is one privacy unit (the owner's explicit
        choice). Adds `ROW_ID_COLUMN` with ids unique across the whole catalogue, so a join
        between two such tables never pairs rows of different units as one unit."""
        if ROW_ID_COLUMN in frame.columns:
            raise InputError(
                f"DPX-C012 table '{name}' already has a column '{ROW_ID_COLUMN}'. Fix: name it "
                f"as the privacy unit (--uid {ROW_ID_COLUMN}) or rename it."
            )
        start = sum(
            len(t.frame) if t.frame is not None else t.row_offset
            for t in self._tables.values()
            if t.unit_source is UnitSource.ROW
        )
        with_ids = frame.copy()
        with_ids.insert(0, ROW_ID_COLUMN, np.arange(start + 1, start + len(frame) + 1))
        clean = _clean(with_ids)
        schema = (
            _checked(name, declared, clean.drop(columns=[ROW_ID_COLUMN]))
            if declared
            else schema_of_frame(clean)
        )
        spec = TableSpec(name, clean, True, ROW_ID_COLUMN, UnitSource.ROW, declared=schema)
        return self._add(spec)

    def add_public(
        self, name: str, frame: pd.DataFrame, declared: TableSchema | None = None
    ) -> TableSpec:
        clean = _clean(frame)
        schema = _checked(name, declared, clean) if declared else schema_of_frame(clean)
        return self._add(TableSpec(name, clean, False, None, declared=schema))

    def add_declared(
        self,
        name: str,
        path: str | Path,
        schema: TableSchema,
        uid: str | None = None,
        private: bool = True,
        row_is_unit: bool = False,
    ) -> TableSpec:
        """Register a file read in place with its declared `schema` (public facts only: nothing
        of the file is read here). A private table names its unit column `uid`, or each row is
        one unit (`row_is_unit`: the engine numbers the rows); a public table is loaded into
        its declared types (public data: the join bound reads its key multiplicities)."""
        path = Path(path).expanduser().resolve()
        if not private:
            from core.data.relation import load_declared

            frame = load_declared(path, schema)
            return self._add(TableSpec(name, frame, False, None, declared=schema))
        if row_is_unit and uid:
            raise InputError(
                "DPX-C013 give either --uid COL or --row-is-unit, not both. Fix: keep --uid COL "
                "if a column says whose data each row is, else keep --row-is-unit."
            )
        if row_is_unit:
            if schema.column(ROW_ID_COLUMN) is not None:
                raise InputError(
                    f"DPX-C012 table '{name}' already has a column '{ROW_ID_COLUMN}'. Fix: name "
                    f"it as the privacy unit (--uid {ROW_ID_COLUMN}) or rename it."
                )
            offset = ROW_ID_STRIDE * (1 + sum(t.unit_source is UnitSource.ROW for t in self.tables()))
            spec = TableSpec(
                name, None, True, ROW_ID_COLUMN, UnitSource.ROW, path, schema, offset
            )
            return self._add(spec)
        if not uid:
            raise InputError(_no_unit_message(name, schema.names))
        if schema.column(uid) is None:
            raise InputError(
                f"DPX-C011 table '{name}' has no privacy-unit column '{uid}'. Columns: "
                f"{', '.join(schema.names)}. Fix: pass the right --uid column, "
                "or --row-is-unit if each row is one person."
            )
        return self._add(TableSpec(name, None, True, uid, UnitSource.COLUMN, path, schema))

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
    missing, distinct = int(column.isna().sum()), int(column.nunique(dropna=True))
    return unit_count_concerns(name, uid, len(frame), missing, distinct)


def unit_count_concerns(name: str, uid: str, rows: int, missing: int, distinct: int) -> list[str]:
    """`unit_column_concerns` from the column's counts (rows, missing values, distinct values),
    e.g. counted by the engine over a table read in place (NOT PRIVATE: owner only)."""
    concerns = []
    if missing:
        concerns.append(
            f"{name}.{uid}: {missing:,} of {rows:,} rows have no value; they belong to no "
            "unit and are left out of every query."
        )
    if rows >= 20 and distinct <= max(2, rows // 100):
        concerns.append(
            f"{name}.{uid}: only {distinct:,} distinct value(s) in {rows:,} rows; a unit "
            "column usually has one value per person. Is this really whose data each row is?"
        )
    return concerns


def _no_unit_message(name: str, names: list[str]) -> str:
    columns = ", ".join(names)
    return (
        f"DPX-C010 table '{name}' has no privacy unit chosen. {UNIT_EXPLANATION} "
        f"Columns: {columns}. Fix: pass --uid COL naming whose data each row is, or "
        "--row-is-unit if each row is one person."
    )


def _clean(frame: pd.DataFrame) -> pd.DataFrame:
    """NaN and ±inf become NULL at load time (spec §2.4: they are NULL at row level).
    Categorical columns become plain values: DuckDB would load them as ENUM types whose
    category list (data, not schema) appears in type and error messages."""
    out = frame.copy(deep=False)  # copy-on-write (pandas >= 3): columns replaced below only
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(out[col].cat.categories.dtype)
        if pd.api.types.is_float_dtype(out[col]):
            values = out[col].to_numpy(dtype=float, na_value=np.nan)
            out[col] = np.where(np.isfinite(values), values, np.nan)
    return out


def _checked(name: str, declared: TableSchema, frame: pd.DataFrame) -> TableSchema:
    """`declared`, after checking that the frame has exactly its columns (file structure, not
    values: a registered file whose header no longer matches is refused)."""
    if [str(c) for c in frame.columns] != declared.names:
        raise InputError(
            f"DPX-C015 table '{name}' does not have its declared columns "
            f"({', '.join(declared.names)}). Nothing was charged. Fix: the owner updates the "
            "schema (`dpx dataset schema`) or registers the file again."
        )
    return declared


def _inferred_type(series: pd.Series) -> ColumnType:
    if pd.api.types.is_bool_dtype(series):
        return ColumnType.BOOLEAN
    if pd.api.types.is_integer_dtype(series):
        return ColumnType.INTEGER
    if pd.api.types.is_float_dtype(series):
        return ColumnType.FLOAT
    if pd.api.types.is_datetime64_any_dtype(series):
        return ColumnType.TIMESTAMP
    sample = series.dropna()
    first = sample.iloc[0] if len(sample) else None
    if isinstance(first, (bool, np.bool_)):
        return ColumnType.BOOLEAN
    if isinstance(first, pd.Timestamp):
        return ColumnType.TIMESTAMP
    if type(first).__name__ == "date":
        return ColumnType.DATE
    return ColumnType.TEXT


def schema_of_frame(frame: pd.DataFrame) -> TableSchema:
    """A schema inferred from a frame given directly (owner mode or a teaching demo), labelled
    `SchemaSource.INFERRED`: its types from the frame's dtypes, text widths from its longest
    value, its size class from its length. NOT PUBLIC FACTS: they are read from the data, so a
    registered dataset never uses this (`Catalog.add_declared`)."""
    columns = []
    for column in frame.columns:
        kind = _inferred_type(frame[column])
        width = None
        if kind is ColumnType.TEXT:
            lengths = frame[column].dropna().astype(str).str.len()
            width = max(1, int(lengths.max()) if len(lengths) else 1)
        columns.append(ColumnFact(str(column), kind, max_length=width))
    return TableSchema(tuple(columns), size_class(len(frame)), SchemaSource.INFERRED)
