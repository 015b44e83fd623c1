"""A published table written to CSV in bulk: the bytes `DataFrame.to_csv(index=False)` writes,
produced by DuckDB's CSV writer (one vectorised pass, several times faster on millions of rows).

DuckDB writes the same text as pandas for integer columns and for text columns, with three
differences this module removes or avoids: an empty text is written as `""` (pandas writes
nothing: here it is passed as NULL, which DuckDB writes as nothing), and a text holding a
carriage return or a `#` is quoted (pandas quotes neither). Tables with such texts, or with any
column of another kind (floats, booleans, dates, mixed objects), are written by pandas.
Nothing here touches privacy: the table is already the publication.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

_QUOTED_BY_DUCKDB_ONLY = "[\r#]"  # texts DuckDB quotes and pandas does not


def write_table_csv(table: pd.DataFrame, path: str | Path) -> None:
    """Write `table` to `path` exactly as `table.to_csv(path, index=False)` would."""
    if not bulk_writable(table):
        table.to_csv(path, index=False)
        return
    import duckdb

    con = duckdb.connect(config={"memory_limit": "1GB"})
    try:
        con.register("publication", table)
        select = ", ".join(
            f"NULLIF({_ident(c)}, '') AS {_ident(c)}" if _is_text(table[c]) else _ident(c)
            for c in table.columns
        )
        target = "'" + str(path).replace("'", "''") + "'"
        # `path` is already a temporary of core.files' atomic writer: DuckDB writes it in place
        # (its own `tmp_` file would be left by a kill under a name clean_stale does not know)
        options = "HEADER, DELIMITER ',', USE_TMP_FILE false"
        con.execute(f"COPY (SELECT {select} FROM publication) TO {target} ({options})")
    except duckdb.Error:  # e.g. a full disk: pandas rewrites the file and raises the OSError
        table.to_csv(path, index=False)  # (errno and message) the CLI reports
    finally:
        con.close()


def bulk_writable(table: pd.DataFrame) -> bool:
    """Whether DuckDB writes `table` byte for byte as pandas does (see the module docstring)."""
    names = list(table.columns)
    if len(names) < 2 or len(table) == 0:  # pandas quotes a lone empty field: not worth a rule
        return False
    if not all(isinstance(c, str) and c for c in names) or len(set(names)) != len(names):
        return False
    if pd.Series(names).str.contains('[\r\n#",]', regex=True).any():
        return False
    for name in names:
        column = table[name]
        if isinstance(column.dtype, np.dtype) and np.issubdtype(column.dtype, np.integer):
            continue
        if not _is_text(column):
            return False
        if column.str.contains(_QUOTED_BY_DUCKDB_ONLY, regex=True, na=False).any():
            return False
    return True


def _is_text(column: pd.Series) -> bool:
    return pd.api.types.infer_dtype(column, skipna=False) == "string"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
