"""Reading a file into its declared schema, in place, with DuckDB (issue 27).

`relation_sql(path, schema)` is a SELECT that DuckDB evaluates where the file lies (no copy into
Python): CSV is read as text (`all VARCHAR`, the declared separator; a malformed line — too few
fields, bytes that are not UTF-8 — is skipped, extra fields are ignored; DuckDB's non-strict
mode, the one setting under which no byte sequence makes the reader raise: see the fuzz test in
tests/data/test_relation.py), Parquet by its columns;
then each declared column is converted by one total rule (`typed_column`):

- integer, float, boolean, date, timestamp: TRY_CAST (a value that does not convert is
  missing); a float that is NaN or ±inf is missing;
- text: cut to its declared `max_length` characters;
- a declared domain (`categories`) or range (`bounds`): a value outside it is missing;
- a row whose non-nullable column is missing is left out.

No value can make the read fail, so whether a query fails never depends on one person's row;
and the types every check sees are the declared ones, whatever the file holds.

Every connection that runs `relation_sql` first calls `guard_connection`: DuckDB 2's
`type_pushdown` optimizer would otherwise move a TRY_CAST of a CSV column into the reader's own
typed parse, where a value that does not parse drops its row (`ignore_errors`) or fails the
query — even under TRY_CAST, and only in some plan shapes (issue 27, round 8: a declared
`x,1` row vanished from a plain read with an unparsable float; see tests/data/test_relation.py).

`propose` gives the owner a schema to confirm at registration, from what the file declares
(Parquet's logical types and required flags; for CSV a typed read of a sample) — never null
counts, min/max statistics or the longest value.
"""

from __future__ import annotations

import csv
from pathlib import Path

from core.data.declared import (
    ColumnFact,
    ColumnType,
    SchemaSource,
    TableSchema,
    size_class,
)
from core.errors import InputError

PARQUET_SUFFIXES = (".parquet", ".pq")


def literal(text: str) -> str:
    """`text` as a SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def identifier(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def is_parquet(path: str | Path) -> bool:
    """By the suffix, or by Parquet's magic bytes (an upload is kept under its digest, with no
    suffix: `ui.upload_store`)."""
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return True
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"PAR1"
    except OSError:
        return False


# DuckDB optimizers that break the total rule on a file read in place (module docstring)
UNSAFE_OPTIMIZERS = ("type_pushdown",)


def guard_connection(con, *also_disabled: str) -> None:
    """Disable `UNSAFE_OPTIMIZERS` (those this DuckDB has) and `also_disabled` on `con`, before
    it runs `relation_sql`: the read then converts every value by `typed_column`'s TRY_CAST,
    whatever the plan around it. `disabled_optimizers` is one setting: callers that disable
    more name them here, not in a second SET that would undo this one."""
    known = {str(r[0]) for r in con.execute("SELECT name FROM duckdb_optimizers()").fetchall()}
    names = [n for n in (*also_disabled, *UNSAFE_OPTIMIZERS) if n in known]
    con.execute(f"SET disabled_optimizers = {literal(','.join(names))}")


def source_sql(path: str | Path, schema: TableSchema) -> str:
    """The table function reading `path` in place: every declared column, CSV as text."""
    path = Path(path)
    if is_parquet(path):
        return f"read_parquet({literal(str(path))})"
    columns = ", ".join(f"{literal(c.name)}: 'VARCHAR'" for c in schema.columns)
    return (
        f"read_csv({literal(str(path))}, header = true, auto_detect = false, "
        f"columns = {{{columns}}}, delim = {literal(schema.delimiter)}, quote = '\"', "
        "escape = '\"', strict_mode = false, ignore_errors = true)"
    )


def typed_column(fact: ColumnFact, ref: str) -> str:
    """The expression that reads the raw value `ref` as `fact` declares it (total: any input
    gives a value of the declared type or NULL, never an error)."""
    kind = fact.type
    if kind is ColumnType.TEXT:
        text, width = f"TRY_CAST({ref} AS VARCHAR)", int(fact.max_length)
        # strlen (bytes, stored with the string) <= width implies at most width characters:
        # only longer values pay for the character-wise cut
        value = f"(CASE WHEN strlen({text}) <= {width} THEN {text} ELSE left({text}, {width}) END)"
    elif kind is ColumnType.FLOAT:
        cast = f"TRY_CAST({ref} AS DOUBLE)"
        value = f"(CASE WHEN isfinite({cast}) THEN {cast} END)"
    else:
        value = f"TRY_CAST({ref} AS {kind.value})"
    if fact.categories is not None:
        allowed = ", ".join(literal(c) for c in fact.categories)
        value = f"(CASE WHEN CAST({value} AS VARCHAR) IN ({allowed}) THEN {value} END)"
    if fact.bounds is not None:
        low, high = fact.bounds
        value = f"(CASE WHEN {value} BETWEEN {low!r} AND {high!r} THEN {value} END)"
    return value


def typed_select(schema: TableSchema, source: str) -> str:
    """SELECT every declared column of `source` (a table function or relation) converted to
    its declared type, leaving out rows whose non-nullable columns are missing."""
    inner = ", ".join(
        f"{typed_column(c, identifier(c.name))} AS {identifier(c.name)}" for c in schema.columns
    )
    required = [identifier(c.name) for c in schema.columns if not c.nullable]
    where = f" WHERE {' AND '.join(f'{r} IS NOT NULL' for r in required)}" if required else ""
    return f"SELECT * FROM (SELECT {inner} FROM {source}){where}"


def relation_sql(path: str | Path, schema: TableSchema) -> str:
    """The file at `path` as the declared table, read in place (see the module docstring)."""
    return typed_select(schema, source_sql(path, schema))


def load_declared(path: str | Path, schema: TableSchema):
    """The whole table in its declared types as a pandas frame: a public table, or a private one
    for a tool that works on its records in Python (the app's pages; PP's per-record
    randomization). DP SQL reads private tables in place instead."""
    import duckdb

    con = duckdb.connect()
    try:
        guard_connection(con)
        return con.execute(relation_sql(path, schema)).df()
    except duckdb.Error as err:
        raise _unreadable(path, err) from None
    finally:
        con.close()


def write_declared(path: str | Path, schema: TableSchema, out: str | Path) -> Path:
    """The table read into its declared schema (`relation_sql`, DuckDB's one rule) written as
    Parquet to `out`: what another engine (Spark) reads, so that it sees the same declared
    types and the same values as DuckDB, never its own inference. `out` belongs in a private
    work directory (`core.files.work_directory`): it holds the private rows."""
    import duckdb

    con = duckdb.connect()
    try:
        guard_connection(con)
        con.execute(f"COPY ({relation_sql(path, schema)}) TO {literal(str(out))} (FORMAT PARQUET)")
    except duckdb.Error as err:
        raise _unreadable(path, err) from None
    finally:
        con.close()
    return Path(out)


def _unreadable(path: str | Path, err: Exception) -> InputError:
    """The one line for a declared table DuckDB could not read at all (a missing or unreadable
    file: never one value, which the declared read turns into a missing value)."""
    return InputError(
        f"cannot read {Path(path).name} with its declared schema ({type(err).__name__}). "
        "Fix: check that the file matches its schema (`dpx dataset schema`)."
    )


# -- proposals (owner side, at registration) ---------------------------------------------------
def csv_header(path: Path, header_only: bool = False) -> tuple[str, list[str]]:
    """The separator (sniffed from a bounded sample; with `header_only`, from the header line
    alone, so that no data line can change it) and the header line's column names."""
    from core.data.loading import refuse_non_text

    refuse_non_text(path)  # UTF-16 or binary: one line saying so
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
        sample = fh.readline(65536) if header_only else fh.read(65536)
    try:
        delimiter = csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = ","
    header = next(csv.reader(sample.splitlines()[:1], delimiter=delimiter), [])
    if not header or any(not name.strip() for name in header):
        raise InputError(
            f"{path.name} has no header line naming every column. Fix: add one, e.g. "
            "uid,age,region."
        )
    return delimiter, [name.strip() for name in header]


def _arrow_type(arrow_type) -> ColumnType:
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        return _arrow_type(arrow_type.value_type)
    if pa.types.is_boolean(arrow_type):
        return ColumnType.BOOLEAN
    if pa.types.is_integer(arrow_type):
        return ColumnType.INTEGER
    if pa.types.is_floating(arrow_type) or pa.types.is_decimal(arrow_type):
        return ColumnType.FLOAT
    if pa.types.is_date(arrow_type):
        return ColumnType.DATE
    if pa.types.is_timestamp(arrow_type):
        return ColumnType.TIMESTAMP
    return ColumnType.TEXT


_DUCKDB_TYPES = {
    "BOOLEAN": ColumnType.BOOLEAN,
    "TINYINT": ColumnType.INTEGER, "SMALLINT": ColumnType.INTEGER,
    "INTEGER": ColumnType.INTEGER, "BIGINT": ColumnType.INTEGER, "HUGEINT": ColumnType.INTEGER,
    "FLOAT": ColumnType.FLOAT, "DOUBLE": ColumnType.FLOAT,
    "DATE": ColumnType.DATE, "TIMESTAMP": ColumnType.TIMESTAMP,
}  # fmt: skip


def propose(path: str | Path, max_rows: int | None = None) -> TableSchema:
    """A schema for the owner to confirm: Parquet's declared logical types and required flags,
    or a typed read of a CSV sample (DuckDB's sniffer); text columns get the public default
    width; the size class is `max_rows` or the smallest class holding the file's rows (Parquet:
    the footer's row count; CSV: bytes / columns, an upper bound that reads no row). Never null
    counts, min/max statistics or value lengths."""
    import duckdb

    path = Path(path)
    if not path.is_file():
        raise InputError(f"file not found: {path}. Fix: check the path.")
    try:
        if is_parquet(path):
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(path)
            arrow = meta.schema_arrow
            index = (arrow.pandas_metadata or {}).get("index_columns", []) or []
            pandas_index = {name for name in index if isinstance(name, str)}
            columns = tuple(
                ColumnFact(f.name, _arrow_type(f.type), nullable=f.nullable)
                for f in arrow
                if f.name not in pandas_index
            )
            rows, delimiter = meta.metadata.num_rows, ","
        else:
            delimiter, header = csv_header(path)
            names = ", ".join(literal(n) for n in header)
            con = duckdb.connect()
            reader = (
                f"read_csv({literal(str(path))}, header = true, delim = {literal(delimiter)}, "
                f"names = [{names}], sample_size = 20480, ignore_errors = true)"
            )
            described = con.execute(f"DESCRIBE SELECT * FROM {reader}").fetchall()
            columns = tuple(
                ColumnFact(str(name), _DUCKDB_TYPES.get(str(kind).upper(), ColumnType.TEXT))
                for name, kind, *_ in described
            )
            con.close()
            # an upper bound on rows without reading them: every row has at least one byte per
            # column (a separator or the line end)
            rows = path.stat().st_size // max(1, len(columns))
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - one line, no value quoted
        raise InputError(
            f"cannot read the schema of {path.name} ({type(err).__name__}). Fix: give a UTF-8 "
            "CSV with a header line or a Parquet file, or declare the schema in a file "
            "(--schema)."
        ) from None
    return TableSchema(
        columns=columns,
        max_rows=int(max_rows) if max_rows else size_class(int(rows)),
        source=SchemaSource.DECLARED,
        delimiter=delimiter,
    )


def inferred(path: str | Path) -> TableSchema:
    """`propose` for a file given directly in owner mode, labelled as inferred."""
    schema = propose(path)
    return TableSchema(schema.columns, schema.max_rows, SchemaSource.INFERRED, schema.delimiter)
