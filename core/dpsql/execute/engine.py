"""The embedded DuckDB sandbox (spec §4.1).

Tables given as frames are copied into an in-memory database first, converted to their schema;
tables of a registered dataset are views that DuckDB reads where they lie, converting each value
into its declared type (`core.data.relation`), the files' paths being the only ones the sandbox
may open; then threads and the memory limit are set,
external access is disabled and the configuration locked, before any SQL derived from a user
query runs. A watchdog thread interrupts a query that runs past the time limit. From then on only the
catalogue tables are visible: no files, network or extensions. The engine only ever executes
SELECTs generated from the validated AST, never the user's string.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

import duckdb
import pandas as pd

from core.data.relation import guard_connection, identifier, relation_sql, typed_select
from core.dpsql.catalog import ROW_ID_COLUMN, Catalog, TableSpec, UnitSource
from core.dpsql.execute.scan import allow
from core.dpsql.limits import DEFAULT_LIMITS, ExecutionStopped, ResourceLimits
from core.errors import InputError
from core.files import work_directory

# Errors that depend only on the schema and the query text (names, types), never on values.
SCHEMA_ERRORS = (duckdb.BinderException, duckdb.CatalogException, duckdb.ParserException)

_DATA_FAILURE = (
    "DPX-E004 the query failed while reading the data (the database message is withheld: it "
    "may quote private values). Fix: use TRY_CAST or guard the expression so that every row "
    "can be computed."
)
# DuckDB's words for a spill disk that is full: an OutOfMemoryException naming its temp-size
# limit (by default the free space of the spill directory's disk), or an IOException (ENOSPC)
_DISK_FULL_WORDS = ("max_temp_directory_size", "no space left on device", "disk is full")


def _spill_disk_full(err: Exception, spill) -> bool:
    """The engine spills (`spill` is its directory) and DuckDB says the disk is full."""
    text = str(err).lower()
    return spill is not None and any(word in text for word in _DISK_FULL_WORDS)


LOCKDOWN = (
    "SET enable_external_access = false",
    "SET lock_configuration = true",
)


def table_sql(spec: TableSpec, raw: str | None = None) -> str:
    """The CREATE statement presenting `spec` in its schema: a view over the file read in place
    (`core.data.relation`), or, for a frame registered as `raw`, a table of it converted to the
    schema. A table whose rows are units is numbered once, into a table, so every reference to
    it sees the same ids."""
    name = identifier(spec.name)
    if spec.in_place:
        select = relation_sql(spec.source, spec.declared)
        if spec.unit_source is UnitSource.ROW:
            return (
                f"CREATE TABLE {name} AS SELECT CAST(row_number() OVER () + {spec.row_offset} AS "
                f"BIGINT) AS {identifier(ROW_ID_COLUMN)}, * FROM ({select})"
            )
        return f"CREATE VIEW {name} AS {select}"
    return f"CREATE TABLE {name} AS {typed_select(spec.schema, identifier(raw))}"


def sandbox(
    catalog: Catalog | dict[str, pd.DataFrame],
    limits: ResourceLimits = DEFAULT_LIMITS,
    spill: Path | None = None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory connection presenting every catalogue table in its schema (frames copied
    in, files read where they lie) — or, given a dict, those frames as they are (released rows
    for post-processing) — with `limits.threads` and `limits.memory_limit` set, locked down
    before it is returned: no file but the registered ones can be opened."""
    con = duckdb.connect(":memory:")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET preserve_insertion_order = false")  # results are ordered explicitly
    # ROW_NUMBER() <= k as a partitioned sort, not a per-unit top-n aggregate: faster and
    # half the memory for the C_u sampling of units spread over many partitions (issue 22);
    # and no cast moved into a CSV reader, where it would drop rows (core.data.relation)
    guard_connection(con, "top_n_window_elimination")
    con.execute(f"SET threads = {int(limits.threads)}")
    con.execute("SET memory_limit = ?", [str(limits.memory_limit)])
    # by default nothing spills to disk (the memory limit is hard); with a spill directory the
    # owner chose, DuckDB writes what does not fit to `spill`, a private directory of its own
    con.execute("SET temp_directory = ?", [str(spill) if spill is not None else ""])
    if isinstance(catalog, dict):
        for name, frame in catalog.items():
            con.register(f"__load_{name}", frame)
            con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM "__load_{name}"')
            con.unregister(f"__load_{name}")
        catalog = Catalog()
    for spec in catalog.tables():
        if spec.in_place:
            con.execute(table_sql(spec))
            continue
        raw = f"__load_{spec.name}"
        con.register(raw, spec.frame)
        con.execute(table_sql(spec, raw))
        con.unregister(raw)
    con.execute(allow([spec.source for spec in catalog.tables() if spec.in_place]))
    for statement in LOCKDOWN:
        con.execute(statement)
    return con


SPILL_PREFIX = "dpx-spill-"


def _private_spill(directory: str | None) -> tempfile.TemporaryDirectory | None:
    """A fresh directory only this process can read (0700) inside `directory` (created if
    missing; `core.files.work_directory`), removed when the engine is collected or the process
    exits; a killed run's directory there is removed first."""
    if directory is None:
        return None
    parent = Path(directory).expanduser()
    try:
        return work_directory(SPILL_PREFIX, parent)
    except OSError as err:
        raise InputError(
            f"DPX-S010 cannot use {parent} to spill to: {err.strerror}. Fix: give --spill-dir "
            "a directory you can write to. Nothing was charged."
        ) from None


class Engine:
    """A locked DuckDB connection over a catalogue; runs generated SELECTs only."""

    def __init__(
        self,
        catalog: Catalog,
        threads: int | None = None,
        timeout_s: float | None = None,
        memory_limit: str | None = None,
        limits: ResourceLimits | None = None,
        spill_directory: str | None = None,
    ):
        """`limits` (or the single overrides) bound threads, memory and the wall-clock
        seconds per query; defaults are `limits.DEFAULT_LIMITS` (60 s). `spill_directory`:
        where DuckDB may write what does not fit in memory (a private subdirectory, mode 0700,
        removed with the engine); None: nothing is written, the memory limit is hard."""
        base = limits or DEFAULT_LIMITS
        self.limits = ResourceLimits(
            threads=threads or base.threads,
            memory_limit=memory_limit or base.memory_limit,
            timeout_s=timeout_s or base.timeout_s,
            spill_directory=spill_directory or base.spill_directory,
        )
        self._spill = _private_spill(self.limits.spill_directory)
        self.timeout_s = self.limits.timeout_s
        self.catalog = catalog
        spill = None if self._spill is None else Path(self._spill.name)
        try:
            self.con = sandbox(catalog, self.limits, spill)
        except duckdb.OutOfMemoryException:
            raise ExecutionStopped(
                f"DPX-E005 the tables do not fit in DuckDB's memory limit "
                f"({self.limits.memory_limit}). Fix: (data owner) give more memory "
                "(--memory-limit) or a directory to spill to (--spill-dir), or register the "
                "tables as Parquet, which is read where it lies."
            ) from None

    def bind(self, sql: str) -> None:
        """Bind `sql` against the schema without running it, so that a query with an unknown
        column or a type error is refused before the ledger is charged (reads no data)."""
        try:
            self.con.cursor().sql(sql)
        except SCHEMA_ERRORS as err:
            raise InputError(
                f"DPX-E001 the query failed in DuckDB: {str(err).splitlines()[0]}. Fix: check "
                "column names and types in the query. Nothing was charged."
            ) from None
        except duckdb.Error:  # binding reads no data, but keep DuckDB's text out anyway
            raise InputError(
                "DPX-E001 DuckDB refused the generated query before reading any data. Fix: "
                "check the query's names, types and literals. Nothing was charged."
            ) from None

    def fetch(self, sql: str) -> tuple[list[str], list[tuple]]:
        """Column names and rows (Python ints stay exact, HUGEINT included). A watchdog
        interrupts a query that runs longer than `timeout_s`."""
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            raise InputError("the engine only runs generated SELECT statements")
        cur = self.con.cursor()  # one cursor per query: safe across Streamlit threads
        watchdog = None
        if self.timeout_s:
            watchdog = threading.Timer(self.timeout_s, cur.interrupt)
            watchdog.start()
        try:
            cur.execute(sql)
            rows = cur.fetchall()
        except duckdb.InterruptException:
            raise ExecutionStopped(
                f"DPX-E003 the query was stopped after the time limit of {self.timeout_s:g} s. "
                "Fix: filter the data, group more coarsely, or raise the time limit (--timeout)."
            ) from None
        except (duckdb.OutOfMemoryException, duckdb.IOException) as err:
            if _spill_disk_full(err, self._spill):
                raise self._spill_full() from None
            if not isinstance(err, duckdb.OutOfMemoryException):
                raise InputError(_DATA_FAILURE) from None
            raise ExecutionStopped(
                f"DPX-E005 the query ran out of memory (limit {self.limits.memory_limit}"
                + (", spilling included" if self._spill is not None else "")
                + "). Fix: filter the data, group more coarsely, avoid joins that multiply rows, "
                "or (data owner) give more memory (--memory-limit) or a directory to spill to "
                "(--spill-dir)."
            ) from None
        except SCHEMA_ERRORS as err:
            raise InputError(
                f"DPX-E001 the query failed in DuckDB: {str(err).splitlines()[0]}. Fix: check "
                "column names and types in the query."
            ) from None
        except duckdb.Error:  # data-dependent: DuckDB's message may quote a private value
            raise InputError(_DATA_FAILURE) from None
        finally:
            if watchdog is not None:
                watchdog.cancel()
        return [d[0] for d in cur.description], rows

    def _spill_full(self) -> ExecutionStopped:
        where = self.limits.spill_directory
        return ExecutionStopped(
            f"DPX-E005 the query stopped: the disk holding the spill directory ({where}) is "
            f"full, memory (limit {self.limits.memory_limit}) was not the limit. Fix: free space "
            "on that disk, or give --spill-dir on a disk with more room, or filter the data or "
            "group more coarsely."
        )

    def frame(self, sql: str, exact: bool = True) -> pd.DataFrame:
        """Rows as a DataFrame; `exact` keeps object dtype so Python ints (HUGEINT sums beyond
        2^53) and None stay as they are; otherwise pandas infers display-friendly dtypes."""
        names, rows = self.fetch(sql)
        return pd.DataFrame(rows, columns=names, dtype=object if exact else None)

    def close(self) -> None:
        self.con.close()
