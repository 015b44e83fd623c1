"""Tables DuckDB reads where they lie: a view over `read_parquet` per scanned table.

A scanned table is never loaded into Python. Its view presents the schema the catalogue holds
(the dtypes a full pandas load would give, from the Parquet footer: `core.dpsql.parquet_schema`)
and does in the engine what loading did: an integer column that pandas would load as float (it
has a NULL) is cast to DOUBLE, and NaN and ±inf in floating columns become NULL (spec §2.4).
The file's path is the only one the sandbox may open (`allowed_paths`, set before the lock):
generated SQL can read the registered files through their views and no other file.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.errors import InputError

INTEGER_TYPES = {
    "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
    "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
}  # fmt: skip
FLOAT_TYPES = {"FLOAT", "DOUBLE"}


def literal(text: str) -> str:
    """`text` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def identifier(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def reader(path: Path) -> str:
    return f"read_parquet({literal(str(path))})"


def view_sql(con, name: str, path: Path, schema: pd.DataFrame) -> str:
    """The CREATE VIEW statement presenting `path` with `schema`'s columns and types.
    Reads the file's footer only (DuckDB's own types of its columns)."""
    native = {
        row[0]: str(row[1]).upper()
        for row in con.execute(f"DESCRIBE SELECT * FROM {reader(path)}").fetchall()
    }
    columns = [str(c) for c in schema.columns]
    # a stored pandas index (e.g. __index_level_0__) is in the file but not in the table pandas
    # loads: the view leaves it out, as loading does
    if not set(columns) <= set(native):
        raise InputError(
            f"DPX-C015 table '{name}' changed while it was being registered ({path}). Fix: "
            "run the query again once the file is complete."
        )
    select = []
    for column in columns:
        ref = identifier(column)
        if pd.api.types.is_float_dtype(schema[column]):
            value = ref if native[column] in FLOAT_TYPES else f"CAST({ref} AS DOUBLE)"
            select.append(f"CASE WHEN isfinite({value}) THEN {value} END AS {ref}")
        else:
            select.append(ref)
    return f"CREATE VIEW {identifier(name)} AS SELECT {', '.join(select)} FROM {reader(path)}"


def allow(paths: list[Path]) -> str:
    """The setting that lets the locked sandbox open exactly `paths` (and nothing else)."""
    return f"SET allowed_paths = [{', '.join(literal(str(p)) for p in paths)}]"
