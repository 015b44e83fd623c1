"""A registered Parquet table's schema without loading it, for `dpx sql` on DuckDB and Spark.

Both engines read a Parquet file where it lies (DuckDB through a view, `core.dpsql.execute.scan`;
Spark itself), the catalogue needs only what validation uses: the column names and the pandas
types `load_table` would give. Those follow from the Parquet footer alone: the Arrow schema
(with the pandas metadata the file was written with) plus, per column, whether any row is
NULL (an integer or boolean column with a NULL becomes float/object in pandas). The stand-in is
a frame of at most two rows built from footer statistics — each column's smallest value, and a
NULL where the footer counts one — passed through the same `pd.read_parquet`, so its dtypes are
those of the full load. It is never queried: only its types are used, and nothing of it is
released. Files whose footer lacks null counts, nested types, or no rows fall back to loading.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from core.errors import InputError


def stand_in(path: str | Path) -> pd.DataFrame | None:
    """A <= 2-row frame with the columns and dtypes `load_table(path)` gives, read from the
    footer only; None when the footer cannot tell (then load the file)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise InputError(f"DPX-C007 file not found: {path}. Fix: check the path.")
    try:
        meta = pq.ParquetFile(path)
    except Exception:  # noqa: BLE001 - not Parquet after all: the loader explains
        return None
    schema, footer = meta.schema_arrow, meta.metadata
    if footer.num_rows == 0 or footer.num_columns != len(schema):  # empty or nested
        return None
    lows: list = [None] * len(schema)
    has_null = [False] * len(schema)
    for g in range(footer.num_row_groups):
        group = footer.row_group(g)
        for i in range(len(schema)):
            if pa.types.is_null(schema.field(i).type):  # an all-NULL column has no statistics
                has_null[i] = True
                continue
            stats = group.column(i).statistics
            if stats is None or not stats.has_null_count:
                return None
            has_null[i] = has_null[i] or stats.null_count > 0
            if stats.has_min_max and (lows[i] is None or stats.min < lows[i]):
                lows[i] = stats.min
    rows = 2 if any(has_null) else 1
    try:
        columns = [
            pa.array([low, None if null else low][:rows], type=field.type)
            for field, low, null in zip(schema, lows, has_null, strict=True)
        ]
        buffer = io.BytesIO()
        pq.write_table(pa.Table.from_arrays(columns, schema=schema), buffer)
        buffer.seek(0)
        return pd.read_parquet(buffer)
    except Exception:  # noqa: BLE001 - a type the stand-in cannot build: load instead
        return None


def add_for_spark(catalog, name: str, path: str | Path, uid: str | None, private: bool):
    """Register a table for the Spark engine: a Parquet file by its footer (`stand_in`; Spark
    reads the file itself, so it is never loaded here and the upload size limit does not
    apply), anything else loaded as for DuckDB."""
    path = Path(path)
    frame = stand_in(path) if path.suffix.lower() in (".parquet", ".pq") else None
    if frame is None:
        return catalog.add_file(name, path, uid, private=private)
    return catalog.add_private(name, frame, uid) if private else catalog.add_public(name, frame)


GLOB_CHARACTERS = set("*?[]{}")


def add_scanned(catalog, name: str, path: str | Path, uid: str | None, private: bool):
    """Register a table for the DuckDB engine: a private Parquet file with a unit column is
    scanned where it lies (its schema from the footer, `stand_in`; never loaded, so the upload
    size limit does not apply); anything else (CSV, public tables, which the join bound reads,
    a footer that cannot tell the types, a path DuckDB would read as a glob) is loaded.

    Public facts only: the footer (schema, row counts, null counts) is what the owner
    registered; no row of the table is read here."""
    path = Path(path)
    scannable = (
        private
        and uid
        and path.suffix.lower() in (".parquet", ".pq")
        and not GLOB_CHARACTERS & set(str(path.resolve()))
    )
    frame = stand_in(path) if scannable else None
    if frame is None:
        return catalog.add_file(name, path, uid, private=private)
    return catalog.add_private_scan(name, frame, uid, path.resolve())
