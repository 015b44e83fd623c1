"""`dpx sql`: run a DP SQL query over CSV/Parquet tables (the issue's CLI contract).

dpx sql --table NAME=FILE [--table NAME=FILE ...] [--public NAME=FILE ...] (--uid COL | --row-is-unit)
        (--query SQL | --query-file F) [--epsilon E] [--delta D] [--max-groups C]
        [--noise laplace|gaussian]
        [--budget-epsilon TOTAL] [--seed S] [--explain] [--dialect duckdb|spark|bigquery|postgres]
        [--json] [--dry-run] [--export-bigquery FILE.sql] [--timeout SECONDS]
        [--max-epsilon-per-query E1] [--max-delta-per-query D1]
Options written in the query's OPTIONS(...) take precedence over the flags; the per-query caps
bound them. No traceback ever leaves `dpx sql`: unexpected errors become a generic exit-2
message that quotes no data (and, after the data was read, keeps the charge; see `service.run`).

This module is the parser only (light: `dpx sql --help` imports no pandas, numpy, DuckDB or
sqlglot); the command itself is `core.cli.sql_run`, imported when it runs.
"""

from __future__ import annotations

from core import cliargs
from core.cli.common import add_dataset_argument
from core.dpsql.limits import DEFAULT_TIMEOUT_S, AnalysisTimeout
from core.errors import InputError

# The rewritten SQL's dialects (core.dpsql.sql.expressions.DIALECTS; a test keeps them equal):
# named here so that `dpx sql --help` imports neither sqlglot nor DuckDB.
DIALECTS = ("duckdb", "spark", "bigquery", "postgres")

SQL_CAPS = cliargs.caps("DPX-B002")  # the caps' refusals carry DP SQL's code (core.governance.caps)


def register(sub, common) -> None:
    p = sub.add_parser(
        "sql",
        parents=[common],
        help="DP SQL: SELECT WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY over private tables",
        description="Run a differentially private SQL query; OPTIONS in the query win over flags.",
    )
    add_arguments(p)
    add_dataset_argument(p)
    p.set_defaults(handler=handle)


def add_arguments(p) -> None:
    """Every `dpx sql` flag, in one place (later flags such as --dataset extend this)."""
    p.add_argument(
        "--table",
        action="append",
        type=cliargs.TABLE,
        default=[],
        metavar="NAME=FILE",
        help="a private table (CSV or Parquet) holding the --uid column",
    )
    p.add_argument(
        "--public",
        action="append",
        type=cliargs.TABLE,
        default=[],
        metavar="NAME=FILE",
        help="a public table (no privacy unit; joins freely)",
    )
    unit = p.add_mutually_exclusive_group()
    unit.add_argument(
        "--uid", type=cliargs.NAME, help="the privacy-unit column of the private tables"
    )
    unit.add_argument(
        "--row-is-unit",
        action="store_true",
        help="each row of the private tables is one person: add a row-id column as the unit",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--query", type=cliargs.QUERY, help="the DP SQL query")
    src.add_argument(
        "--query-file", type=cliargs.QUERY_FILE, help="a file holding the DP SQL query"
    )
    p.add_argument("--epsilon", type=cliargs.RELEASE_EPSILON, help="default epsilon if the query has none")
    p.add_argument("--delta", type=cliargs.DELTA, help="default delta if the query has none")
    p.add_argument(
        "--max-groups",
        type=cliargs.MAX_GROUPS_CONTRIBUTED,
        help="default max_groups_contributed (C_u)",
    )
    p.add_argument(
        "--noise",
        choices=("laplace", "gaussian"),
        default=None,
        help="noise of counts and sums if the query has no noise option: laplace (default; "
        "L1 sensitivity C_u x bound) or gaussian (discrete Gaussian at (epsilon, delta); L2 "
        "sensitivity sqrt(C_u) x bound: narrower when a unit touches many groups)",
    )
    p.add_argument(
        "--budget-epsilon",
        type=cliargs.EPSILON_OR_ZERO,
        help="total epsilon this invocation may spend; a larger query is refused",
    )
    p.add_argument("--explain", action="store_true", help="also print the rewritten SQL")
    p.add_argument(
        "--dialect",
        choices=DIALECTS,
        default="duckdb",
        help="dialect of the rewritten SQL shown by --explain",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="public parameters only (tau, T, interval widths, survival); reads no "
        "data and charges nothing",
    )
    p.add_argument(
        "--export-bigquery",
        type=cliargs.SQL_TEXT,
        metavar="FILE.sql",
        help="write the query in BigQuery's SELECT WITH DIFFERENTIAL_PRIVACY syntax "
        "and exit; reads no data, charges nothing",
    )
    p.add_argument(
        "--timeout",
        type=cliargs.TIMEOUT,
        default=None,
        metavar="SECONDS",
        help=f"wall-clock limit of the query in the engine (default {DEFAULT_TIMEOUT_S:g}, scaled "
        "up with the tables' file size; a limit too short to read the tables is refused before "
        "charging); a query stopped after reading data keeps its charge",
    )
    p.add_argument(
        "--memory-limit",
        type=cliargs.MEMORY,
        default=None,
        metavar="SIZE",
        help="DuckDB's memory limit, e.g. 1GB (default: half of the machine's memory); past it "
        "the query stops (DPX-E005, the charge kept) unless --spill-dir is given",
    )
    p.add_argument(
        "--spill-dir",
        type=cliargs.DIRECTORY,
        default=None,
        metavar="DIR",
        help="data owner only: let DuckDB write what does not fit in memory to a private "
        "directory (0700) inside DIR, removed afterwards (by default nothing is written)",
    )
    p.add_argument(
        "--max-epsilon-per-query",
        type=SQL_CAPS[0],
        help="refuse a query whose epsilon is above this cap (no cap by default)",
    )
    p.add_argument(
        "--max-delta-per-query",
        type=SQL_CAPS[1],
        help="refuse a query whose delta is above this cap (no cap by default)",
    )
    p.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        default="duckdb",
        help="where the staged SQL runs: embedded DuckDB, or Apache Spark (pip install "
        "-e '.[spark]' and Java 17); noise and post-processing stay in Python",
    )
    p.add_argument(
        "--spark-master",
        type=cliargs.TEXT,
        metavar="URL",
        help="Spark master for --engine spark (default local[2]; e.g. spark://host:7077)",
    )


def handle(args) -> dict | str:
    """`dpx sql` with a top-level guard: any unexpected exception before the charge becomes a
    generic one-line refusal (exit 2) that quotes no data; after the charge the governed flow
    keeps the charge and says so."""
    from core.cli.sql_run import execute  # the heavy modules, only when the command runs
    from core.dpsql.jsonsafe import jsonable

    try:
        out = execute(args)
        return jsonable(out) if isinstance(out, dict) else out
    except InputError:
        raise
    except AnalysisTimeout:
        raise InputError(
            "DPX-S007 analysing the query took longer than the time limit of "
            f"{args.timeout or DEFAULT_TIMEOUT_S:g} s "
            "(no data was read; nothing was charged). Fix: simplify the query (fewer CTE "
            "references, shorter CASE/IN lists) or raise --timeout."
        ) from None
    except RecursionError:
        raise InputError(
            "DPX-S005 the query is nested too deeply to analyse. Fix: flatten it. "
            "Nothing was charged."
        ) from None
    except Exception:  # noqa: BLE001 - never a traceback
        raise InputError(
            "DPX-E009 internal error before any data was read (details withheld). Nothing was "
            "charged. Fix: report the query (a fault in DP Explorer, not in the query); "
            "rephrasing it may avoid the fault."
        ) from None
