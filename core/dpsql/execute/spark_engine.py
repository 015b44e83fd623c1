"""DP SQL on Apache Spark: the same validated staged plan, run by Spark SQL (issue 11).

`SparkEngine` is a drop-in for `core.dpsql.execute.engine.Engine` as far as `service.run` needs it
(`bind(sql)` and `frame(sql)`, the `StageEngine` protocol below): the service generates the
executed DuckDB SQL from the validated AST, and this engine only translates that generated SQL
to Spark's dialect (sqlglot) — never the user's string. Noise, thresholding and post-processing
stay in Python (`core.dpsql.release.noise`), exactly as with DuckDB; only the cross-user result (one
row per partition, plus quantile value lists) is collected to the driver.

Tables: every catalogue table becomes a temporary view of a private Spark session (its own view
namespace; SQL on files is switched off). Each table is first read into its declared schema by
DuckDB — the very statement the DuckDB engine uses (`core.dpsql.execute.engine.table_sql`: a
value that does not fit its type, width or domain becomes missing) — and written once to Parquet
in a private temporary directory; Spark reads that file with the declared types. So both engines
apply one conversion rule and see exactly the same values and types.

Privacy: the engine changes nothing in the mechanisms; the staged SQL and its sampling key
(`core.dpsql.sql.sampling_key`) are the same, so for the same salt the cross-user table equals
DuckDB's. Any failure while Spark reads data becomes a generic message that quotes no value.
"""

from __future__ import annotations

import threading
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Protocol

import duckdb
import pandas as pd
import sqlglot
from sqlglot import exp

from core.data.declared import ColumnType, TableSchema
from core.data.relation import identifier, literal
from core.dpsql.catalog import Catalog, TableSpec
from core.dpsql.execute.engine import table_sql
from core.dpsql.limits import DEFAULT_LIMITS, ExecutionStopped
from core.dpsql.sql.partition_key import is_word, spark_word
from core.dpsql.sql.sampling_key import is_key, spark_key
from core.errors import InputError
from core.files import work_directory
from core.sparkutil import spark_session


class StageEngine(Protocol):
    """What `service.run` needs from an engine: bind (schema check, no data read) and run."""

    def bind(self, sql: str) -> None: ...

    def frame(self, sql: str, exact: bool = True) -> pd.DataFrame: ...


DUCKDB_TO_SPARK = {
    "BOOLEAN": "BOOLEAN",
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INTEGER": "INT",
    "BIGINT": "BIGINT",
    "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE",
    "VARCHAR": "STRING",
    "DATE": "DATE",
    "TIMESTAMP": "TIMESTAMP_NTZ",
    "TIMESTAMP_NS": "TIMESTAMP_NTZ",
    "TIMESTAMP_MS": "TIMESTAMP_NTZ",
    "TIMESTAMP_S": "TIMESTAMP_NTZ",
    "TIMESTAMP WITH TIME ZONE": "TIMESTAMP",
}


SPARK_TYPES = {
    ColumnType.INTEGER: "BIGINT",
    ColumnType.FLOAT: "DOUBLE",
    ColumnType.TEXT: "STRING",
    ColumnType.BOOLEAN: "BOOLEAN",
    ColumnType.DATE: "DATE",
    ColumnType.TIMESTAMP: "TIMESTAMP_NTZ",
}


def spark_schema(schema: TableSchema) -> str:
    """The Spark DDL schema of a declared table schema."""
    return ", ".join(f"`{c.name.replace('`', '``')}` {SPARK_TYPES[c.type]}" for c in schema.columns)


def to_spark_sql(duckdb_sql: str) -> str:
    """The generated (executed) DuckDB SQL in Spark's dialect.

    DuckDB's LIST keeps NULL elements but Spark's COLLECT_LIST drops them, so a filtered
    per-row LIST(x) (parsed back as ARRAY_AGG) becomes TRANSFORM(COLLECT_LIST(STRUCT(x AS v)) FILTER (...), s -> s.v).
    TRY(...) is dropped: with ANSI mode off (`core.sparkutil`) Spark yields NULL instead of an
    error for casts and division by zero. The row sampling key (DuckDB's md5_number) becomes its
    Spark form, which orders the same way (`core.dpsql.sql.sampling_key`), and a partition
    key's MD5 word ('0x' || hex digits cast to BIGINT) Spark's CONV of the same digits
    (`core.dpsql.sql.partition_key`)."""
    tree = sqlglot.parse_one(duckdb_sql, read="duckdb")

    def keep_nulls(node):
        if is_key(node):
            return spark_key(node)
        if is_word(node):
            return spark_word(node)
        if isinstance(node, exp.Filter) and isinstance(node.this, (exp.List, exp.ArrayAgg)):
            inner = node.this
            values = inner.expressions if isinstance(inner, exp.List) else [inner.this]
            if len(values) == 1:
                wrapped = exp.ArrayAgg(
                    this=exp.Struct(
                        expressions=[
                            exp.PropertyEQ(this=exp.to_identifier("v"), expression=values[0])
                        ]
                    )
                )
                unwrap = exp.Lambda(
                    this=exp.Dot(this=exp.to_identifier("s"), expression=exp.to_identifier("v")),
                    expressions=[exp.to_identifier("s")],
                )
                return exp.Transform(
                    this=exp.Filter(this=wrapped, expression=node.expression), expression=unwrap
                )
        return node

    return tree.transform(keep_nulls).sql(dialect="spark")


class SparkEngine:
    """Catalogue tables as temporary views of a private Spark session; runs generated SQL."""

    def __init__(
        self,
        catalog: Catalog,
        master: str | None = None,
        session=None,
        timeout_s: float | None = None,
    ):
        """`timeout_s` (default `limits.DEFAULT_LIMITS`) cancels a query's Spark jobs after
        that many wall-clock seconds, like the DuckDB watchdog (the charge stands)."""
        self.timeout_s = timeout_s or DEFAULT_LIMITS.timeout_s
        base = session or spark_session(master)
        self.spark = base.newSession()  # its own temporary views
        self.spark.conf.set("spark.sql.runSQLOnFiles", "false")
        self.catalog = catalog
        # named by this process (core.files): a killed run's copy is removed at the next start
        self._work = work_directory("dpx-spark-")
        self._tmp = Path(self._work.name)
        for spec in catalog.tables():
            schema = spark_schema(spec.schema)
            path = self._tmp / f"{spec.name}.parquet"
            _write_declared(spec, path)
            try:
                frame = self.spark.read.schema(schema).parquet(str(path))
                frame.createOrReplaceTempView(spec.name)
            except Exception:  # noqa: BLE001 - before any query: no value is quoted anyway
                raise InputError(
                    f"DPX-E001 Spark could not register table '{spec.name}' from {path}. Fix: "
                    "check that the file exists and is readable by the Spark workers. Nothing "
                    "was charged."
                ) from None

    def bind(self, sql: str) -> None:
        """Analyse the translated SQL (Spark resolves names and types eagerly; no data read)."""
        from pyspark.errors import AnalysisException, ParseException

        try:
            self.spark.sql(to_spark_sql(sql))
        except (AnalysisException, ParseException) as err:
            raise InputError(
                f"DPX-E001 Spark refused the generated query: {str(err).splitlines()[0][:200]}. "
                "Fix: check column names and types. Nothing was charged."
            ) from None
        except Exception:  # noqa: BLE001 - analysis reads no data; keep Spark's text out anyway
            raise InputError(
                "DPX-E001 Spark refused the generated query before reading any data. Fix: check "
                "the query's names, types and literals, and that Spark is running. Nothing was "
                "charged."
            ) from None

    def fetch(self, sql: str) -> tuple[list[str], list[tuple]]:
        """Column names and rows of the generated SELECT; DECIMAL sums come back as ints."""
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")):
            raise InputError("the engine only runs generated SELECT statements")
        context = self.spark.sparkContext
        group = f"dpx-{uuid.uuid4().hex}"
        stopped, done = threading.Event(), threading.Event()

        def stop() -> None:  # keeps cancelling: a job may start after the deadline
            stopped.set()
            while not done.is_set():
                context.cancelJobGroup(group)
                done.wait(0.2)

        watchdog = threading.Timer(self.timeout_s, stop)
        context.setJobGroup(group, "dpx query", interruptOnCancel=True)
        watchdog.start()
        try:
            frame = self.spark.sql(to_spark_sql(sql))
            rows = frame.collect()
        except Exception:  # noqa: BLE001 - Spark's message may quote private values
            if stopped.is_set():
                raise ExecutionStopped(
                    f"DPX-E003 the query was stopped after the time limit of {self.timeout_s:g} "
                    "s. Fix: filter the data, group more coarsely, or raise the time limit "
                    "(--timeout)."
                ) from None
            raise InputError(
                "DPX-E004 the query failed in Spark while reading the data (the message is "
                "withheld: it may quote private values). Fix: use TRY_CAST or guard the "
                "expression so that every row can be computed, and check the Spark cluster."
            ) from None
        finally:
            done.set()
            watchdog.cancel()
            context.setLocalProperty("spark.jobGroup.id", None)
        return list(frame.columns), [tuple(_plain(v) for v in row) for row in rows]

    def frame(self, sql: str, exact: bool = True) -> pd.DataFrame:
        names, rows = self.fetch(sql)
        return pd.DataFrame(rows, columns=names, dtype=object if exact else None)

    def close(self) -> None:
        for spec in self.catalog.tables():
            self.spark.catalog.dropTempView(spec.name)
        self._work.cleanup()


def _plain(value):
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _write_declared(spec: TableSpec, path: Path) -> None:
    """`spec` read into its schema by DuckDB (the DuckDB engine's own statement), as Parquet."""
    con = duckdb.connect(":memory:")
    try:
        raw = f"__load_{spec.name}"
        if not spec.in_place:
            con.register(raw, spec.frame)
        con.execute(table_sql(spec, raw).replace("CREATE VIEW", "CREATE TABLE", 1))
        con.execute(f"COPY {identifier(spec.name)} TO {literal(str(path))} (FORMAT PARQUET)")
    except duckdb.Error:
        raise InputError(
            f"DPX-E001 table '{spec.name}' could not be prepared for Spark. Fix: check that the "
            "file exists and matches its declared schema. Nothing was charged."
        ) from None
    finally:
        con.close()
