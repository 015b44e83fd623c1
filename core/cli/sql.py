"""`dpx sql`: run a DP SQL query over CSV/Parquet tables (the issue's CLI contract).

dpx sql --table NAME=FILE [--table NAME=FILE ...] [--public NAME=FILE ...] (--uid COL | --row-is-unit)
        (--query SQL | --query-file F) [--epsilon E] [--delta D] [--max-groups C]
        [--budget-epsilon TOTAL] [--seed S] [--explain] [--dialect duckdb|spark|bigquery|postgres]
        [--json] [--dry-run] [--export-bigquery FILE.sql] [--timeout SECONDS]
        [--max-epsilon-per-query E1] [--max-delta-per-query D1]
Options written in the query's OPTIONS(...) take precedence over the flags; the per-query caps
bound them. No traceback ever leaves `dpx sql`: unexpected errors become a generic exit-2
message that quotes no data (and, after the data was read, keeps the charge; see `service.run`).
"""

from __future__ import annotations

import math
from pathlib import Path

from core import cliargs
from core.cli.common import (
    add_dataset_argument,
    params_of,
    registry_info,
    registry_line,
    release_view,
    resolve,
    view_text,
)
from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.jsonsafe import jsonable
from core.dpsql.limits import (
    DEFAULT_TIMEOUT_S,
    AnalysisTimeout,
    analysis_deadline,
    check_timeout,
)
from core.dpsql.parquet_schema import add_for_spark
from core.dpsql.record import sql_artefact
from core.dpsql.service import check_before_charge, explain, prepare, run
from core.dpsql.sql.bigquery import to_bigquery
from core.dpsql.sql.expressions import DIALECTS
from core.errors import BudgetExceededError, InputError
from core.files import write_text
from core.governance import Request, Role, govern
from core.governance.caps import QueryCaps
from core.privacy import Cost
from core.registry import Claim, Dataset, Tool

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
    p.add_argument("--epsilon", type=cliargs.EPSILON, help="default epsilon if the query has none")
    p.add_argument("--delta", type=cliargs.DELTA, help="default delta if the query has none")
    p.add_argument(
        "--max-groups",
        type=cliargs.MAX_GROUPS_CONTRIBUTED,
        help="default max_groups_contributed (C_u)",
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
        type=cliargs.OUTPUT_FILE,
        metavar="FILE.sql",
        help="write the query in BigQuery's SELECT WITH DIFFERENTIAL_PRIVACY syntax "
        "and exit; reads no data, charges nothing",
    )
    p.add_argument(
        "--timeout",
        type=cliargs.TIMEOUT,
        default=DEFAULT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"wall-clock limit of the query in DuckDB (default {DEFAULT_TIMEOUT_S:g}); a query "
        "stopped after reading data keeps its charge",
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


def _pairs(values: list[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not name or not path:
            raise InputError(
                f"DPX-C001 {flag} expects NAME=FILE, got '{v}'. Fix: e.g. {flag} orders=orders.csv"
            )
        out.append((name.strip(), path.strip()))
    return out


def handle(args) -> dict | str:
    """`dpx sql` with a top-level guard: any unexpected exception before the charge becomes a
    generic one-line refusal (exit 2) that quotes no data; after the charge the governed flow
    keeps the charge and says so."""
    try:
        out = execute(args)
        return jsonable(out) if isinstance(out, dict) else out
    except InputError:
        raise
    except AnalysisTimeout:
        raise InputError(
            f"DPX-S007 analysing the query took longer than the time limit of {args.timeout:g} s "
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


def _budget(value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise InputError(
            f"DPX-C003 --budget-epsilon must be a finite number >= 0, got {value}. Fix: e.g. "
            "--budget-epsilon 1."
        )
    return value


def _use_dataset(args, dataset: Dataset) -> None:
    """A registered dataset supplies the tables and the unit (stated at registration)."""
    if args.budget_epsilon is not None:
        raise InputError(
            "--budget-epsilon does not apply to a registered dataset: its budget is in the "
            "registry (`dpx dataset show NAME`)."
        )
    if args.uid and args.uid != dataset.uid:
        raise InputError(f"--uid {args.uid} differs from dataset '{dataset.name}''s unit.")
    if args.row_is_unit and not dataset.row_is_unit:
        raise InputError("--row-is-unit does not apply: the dataset's unit is set.")
    if not dataset.uid and not dataset.row_is_unit:
        raise InputError(
            f"dataset '{dataset.name}' has no privacy-unit column: DP SQL needs one. Fix: the "
            "owner registers it with --uid COL or --row-is-unit."
        )
    args.uid, args.row_is_unit = dataset.uid, dataset.row_is_unit
    args.table = [f"{t.name}={t.path}" for t in dataset.private_tables]
    args.public = [f"{t.name}={t.path}" for t in dataset.public_tables]


def _invocation_checks(args, cost: Cost):
    """The invocation's own limits on files given directly: --max-*-per-query (DPX-B002) and
    --budget-epsilon (DPX-B001). A registered dataset's policy is the registry's."""
    caps = QueryCaps(
        args.max_epsilon_per_query,
        args.max_delta_per_query,
        "--max-epsilon-per-query / --max-delta-per-query",
    )
    budget = _budget(args.budget_epsilon)

    def check() -> None:
        caps.check(cost.epsilon, cost.delta)
        if budget is not None and cost.epsilon > budget * (1 + 1e-12):
            raise BudgetExceededError(
                f"DPX-B001 the query needs epsilon = {cost.epsilon:.4g}, above --budget-epsilon "
                f"{budget:g} (this invocation's budget). Nothing was charged. Fix: lower epsilon "
                f"to <= {budget:g}."
            )

    return check


def _catalog(args) -> tuple[Catalog, str | None]:
    if not args.table:
        raise InputError(
            "DPX-C004 dpx sql needs at least one private table. Fix: add --table NAME=FILE "
            "with --uid COL (or --row-is-unit)."
        )
    catalog = Catalog()
    by_footer = getattr(args, "engine", "duckdb") == "spark" and not args.row_is_unit
    for name, path in _pairs(args.table, "--table"):
        spec = (
            add_for_spark(catalog, name, path, args.uid, private=True)  # Parquet: not loaded
            if by_footer
            else catalog.add_file(
                name, Path(path), args.uid, private=True, row_is_unit=args.row_is_unit
            )
        )
    for name, path in _pairs(args.public, "--public"):
        if by_footer:
            add_for_spark(catalog, name, path, None, private=False)
        else:
            catalog.add_file(name, Path(path), None, private=False)
    return catalog, spec.uid


def _query_text(args) -> str:
    if not args.query_file:
        return args.query
    try:
        return Path(args.query_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        reason = err.strerror if isinstance(err, OSError) else "not UTF-8 text"
        raise InputError(
            f"DPX-C005 cannot read --query-file {args.query_file}: {reason}. Fix: pass a UTF-8 "
            "text file holding the query."
        ) from None


def execute(args) -> dict | str:
    """Run `dpx sql`: prepare (no data), then the governed release — policies, the charge of
    `prepared.cost`, the staged SQL with an accountant holding exactly that charge, the typed
    record and the mechanisms that drew.

    Privacy claim: (ε, δ) = `prepared.cost` at unit level (the unit column, or one row with
    --row-is-unit), composed from the very mechanism objects that draw; charged before any
    private row is read."""
    timeout = check_timeout(args.timeout)
    target = resolve(args, Tool.SQL.value, files=("table", "public"))
    if target.dataset is not None:
        _use_dataset(args, target.dataset)
    catalog, uid = _catalog(args)
    noise = target.noise
    defaults = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "max_groups_contributed": args.max_groups,
    }
    with analysis_deadline(timeout):  # reads no data: a slow analysis is refused uncharged
        prepared = prepare(_query_text(args), catalog, noise, defaults)
    if args.export_bigquery:
        text, warnings = to_bigquery(prepared.query, uid)
        _write_whole(Path(args.export_bigquery), text + ";\n")
        out = {"bigquery_export": args.export_bigquery, "warnings": warnings, "sql": text}
        return out if args.json else "\n".join([text, *[f"warning: {w}" for w in warnings]])
    if args.dry_run:
        info = explain(prepared, args.dialect)
        info["mode"] = noise.mode
        return info if args.json else _explain_text(info)
    engine = _engine(args, catalog, timeout)
    try:
        check_before_charge(prepared, engine)  # binding reads no data: refused uncharged
        unit = f"one person (column {uid})" if uid and not args.row_is_unit else "one row"
        request = Request(
            tool=Tool.SQL.value,
            role=target.role,
            dataset=target.dataset,
            params=params_of(args),
            cost=prepared.cost,
            claim=Claim(unit, None if args.row_is_unit else uid),
            noise=noise,
            extra_checks=() if target.dataset else (_invocation_checks(args, prepared.cost),),
            error_code="DPX-E009",
        )
        try:
            governed = govern(
                target.registry,
                request,
                lambda accountant: run(prepared, engine, accountant),
                lambda result: sql_artefact(result, request.claim.unit_column).to_json(),
            )
        except BudgetExceededError as err:
            raise _budget_refusal(err) from None
    finally:
        engine.close()
    if target.role is Role.ANALYST:
        view = release_view(target.registry, governed.record)
        if args.json:
            return view
        return view_text(view, f"DP SQL release: {len(view['result']['rows'])} rows")
    try:  # charged from here on: a failure says so
        out = jsonable(governed.result.to_dict())
        if governed.record is not None:
            out["registry"] = registry_info(target.registry, governed.record)
        if args.explain:
            out["rewritten_sql"] = prepared.staged.sql(args.dialect)
            out["dialect"] = args.dialect
        if args.json:
            return out
        text = _result_text(out)
        return text + ("\n" + registry_line(out["registry"]) if "registry" in out else "")
    except Exception:  # noqa: BLE001 - never a traceback, never data in the message
        raise InputError(
            "DPX-E009 internal error while formatting the release (details withheld). The "
            f"charge of epsilon = {prepared.cost.epsilon:.4g} stands. Fix: report the query (a "
            "fault in DP Explorer, not in the query); running it again is charged again."
        ) from None


def _budget_refusal(err: BudgetExceededError) -> BudgetExceededError:
    """DP SQL's rule code on a budget (DPX-B001) or per-query cap (DPX-B002) refusal."""
    text = str(err)
    if text.startswith("DPX-"):
        return BudgetExceededError(text)
    code = "DPX-B002" if "per-query cap" in text else "DPX-B001"
    return BudgetExceededError(f"{code} {text}")


def _engine(args, catalog: Catalog, timeout: float):
    if getattr(args, "engine", "duckdb") == "spark":
        from core.dpsql.execute.spark_engine import SparkEngine  # optional extra, on demand

        files = {} if args.row_is_unit else dict(_pairs(args.table + args.public, "--table"))
        return SparkEngine(catalog, files=files, master=args.spark_master, timeout_s=timeout)
    return Engine(catalog, timeout_s=timeout)


def _write_whole(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (core.files, the one atomic writer)."""
    try:
        write_text(path, text)
    except InputError as err:
        reason, _, fix = str(err).partition(" Fix: ")
        raise InputError(
            f"DPX-C006 {reason} Fix: {fix or 'choose a writable file path.'}"
        ) from None


def _result_text(out: dict) -> str:
    lines = [" | ".join(out["columns"])]
    for r, row in enumerate(out["rows"]):
        cells = []
        for name, v in zip(out["columns"], row, strict=True):
            hw = out["ci95"].get(name, [None] * (r + 1))[r]
            cells.append(
                f"{v:.6g} ± {hw:.3g}" if isinstance(v, float) and hw is not None else str(v)
            )
        lines.append(" | ".join(cells))
    th = out["threshold"]
    rule = (
        "public groups, no threshold"
        if th["integer"] is None
        else f"noisy unit count >= T = {th['integer']}, tau = {th['tau']:.3f}"
    )
    lines.append(
        f"{out['partitions_released']} partitions released ({rule}); "
        f"epsilon spent {out['epsilon_spent']:g}, "
        f"delta spent {out['delta_spent']:g}; noise: {out['mode']}. "
        "Intervals are 95% noise-only."
    )
    if "rewritten_sql" in out:
        lines += ["", out["rewritten_sql"]]
    return "\n".join(lines)


def _explain_text(info: dict) -> str:
    th = info["threshold"]
    lines = [
        "public groups: no threshold"
        if th["integer"] is None
        else f"tau = {th['tau']:.3f}, T = {th['integer']}, threshold scale {th['scale']:.4g}"
    ]
    for r in info["budget_split"]:
        lines.append(
            f"  {r['aggregate']} [{r['component']}]: epsilon {r['epsilon']:.4g}, delta "
            f"{r['delta']:g}, scale {r['scale']:.4g}, 95% ± {r['half_width_95']}"
        )
    lines.append(
        "survival: "
        + ", ".join(
            f"{p['units']}: {p['keep_probability']:.2f}" for p in info["survival_curve"][::8]
        )
    )
    lines += ["", info["rewritten_sql"]]
    return "\n".join(lines)
