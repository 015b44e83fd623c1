"""`dpx sql`, the command (its parser is `core.cli.sql`): prepare the query from public facts,
then the governed release over the tables read where they lie.
"""

from __future__ import annotations

import math
from pathlib import Path

from core.cli.common import (
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
from core.dpsql.limits import DEFAULT_TIMEOUT_S, analysis_deadline, check_timeout
from core.dpsql.record import sql_artefact
from core.dpsql.service import check_before_charge, explain, prepare, run
from core.dpsql.sql.bigquery import to_bigquery
from core.dpsql.tables import catalog_of_dataset, catalog_of_files
from core.dpsql.time_limit import EngineKind, TimeLimit, decide, declared_rows
from core.errors import BudgetExceededError, InputError
from core.files import write_text
from core.governance import Role, RoleError, govern
from core.governance.caps import QueryCaps
from core.governance.origin import Origin
from core.governance.sql import sql_request
from core.privacy import Cost
from core.registry import Dataset, Tool


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


def _catalog(args, dataset: Dataset | None, role: Role) -> tuple[Catalog, str | None]:
    """The query's tables with their public schemas: a registered dataset's declared ones, or
    (files given directly, owner mode) schemas inferred from the files' declared types."""
    if dataset is not None:
        catalog = catalog_of_dataset(dataset, owner=role is not Role.ANALYST)
    else:
        catalog = catalog_of_files(
            _pairs(args.table, "--table"),
            _pairs(args.public, "--public"),
            uid=args.uid,
            row_is_unit=args.row_is_unit,
        )
    private = [t for t in catalog.tables() if t.private]
    return catalog, private[-1].uid


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
    given = None if args.timeout is None else check_timeout(args.timeout)
    target = resolve(args, Tool.SQL.value, files=("table", "public"))
    _check_engine_options(args, target.role)
    if target.dataset is not None:
        _use_dataset(args, target.dataset)
    catalog, uid = _catalog(args, target.dataset, target.role)
    limit = _time_limit(args, given, catalog)  # declared sizes only, before the charge
    noise = target.noise
    defaults = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "max_groups_contributed": args.max_groups,
        "noise": getattr(args, "noise", None),
    }
    with analysis_deadline(
        given or DEFAULT_TIMEOUT_S
    ):  # reads no data: a slow analysis is refused uncharged
        prepared = prepare(_query_text(args), catalog, noise, defaults)
    if args.export_bigquery:
        text, warnings = to_bigquery(prepared.query, uid)
        _write_whole(Path(args.export_bigquery), text + ";\n")
        out = {"bigquery_export": args.export_bigquery, "warnings": warnings, "sql": text}
        return out if args.json else "\n".join([text, *[f"warning: {w}" for w in warnings]])
    if args.dry_run:
        info = explain(prepared, args.dialect)
        info["mode"] = noise.mode
        info["time_limit"] = limit.to_json()
        return info if args.json else _explain_text(info) + "\n" + limit.line()
    engine = _engine(args, catalog, limit.seconds)
    try:
        check_before_charge(prepared, engine)  # binding reads no data: refused uncharged
        request = sql_request(
            prepared,
            role=target.role,
            dataset=target.dataset,
            noise=noise,
            door=Origin.cli(params_of(args)),
            extra_checks=() if target.dataset else (_invocation_checks(args, prepared.cost),),
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
            return {**view, "time_limit": limit.to_json()}
        headline = f"DP SQL release: {len(view['result']['rows'])} rows"
        return view_text(view, headline) + "\n" + limit.line()
    try:  # charged from here on: a failure says so
        out = jsonable(governed.result.to_dict())
        if governed.record is not None:
            out["registry"] = registry_info(target.registry, governed.record)
        out["time_limit"] = limit.to_json()
        if args.explain:
            out["rewritten_sql"] = prepared.staged.sql(args.dialect)
            out["dialect"] = args.dialect
        if args.json:
            return out
        text = _result_text(out) + "\n" + limit.line()
        return text + ("\n" + registry_line(out["registry"]) if "registry" in out else "")
    except Exception:  # noqa: BLE001 - never a traceback, never data in the message
        raise InputError(
            "DPX-E009 internal error while formatting the release (details withheld). The "
            f"charge of epsilon = {prepared.cost.epsilon:.4g} stands. Fix: report the query (a "
            "fault in DP Explorer, not in the query); running it again is charged again."
        ) from None


def _time_limit(args, given: float | None, catalog: Catalog) -> TimeLimit:
    """The run's time limit from the tables' declared size classes (public facts), before the
    charge: the default scaled up for large tables, or a given --timeout too short for them
    refused."""
    engine = EngineKind(getattr(args, "engine", "duckdb"))
    limit = decide(given, declared_rows(catalog), engine)
    args.timeout = limit.seconds  # recorded with the run's parameters
    return limit


def _budget_refusal(err: BudgetExceededError) -> BudgetExceededError:
    """DP SQL's rule code on a budget (DPX-B001) or per-query cap (DPX-B002) refusal."""
    text = str(err)
    if text.startswith("DPX-"):
        return BudgetExceededError(text)
    code = "DPX-B002" if "per-query cap" in text else "DPX-B001"
    return BudgetExceededError(f"{code} {text}")


def _check_engine_options(args, role: Role) -> None:
    """--memory-limit and --spill-dir: DuckDB's, and where private intermediate data may be
    written is the data owner's decision (refused before anything is read or charged)."""
    spark = getattr(args, "engine", "duckdb") == "spark"
    if spark and (args.memory_limit or args.spill_dir):
        raise InputError(
            "--memory-limit and --spill-dir set DuckDB's memory; Spark uses its own "
            "configuration. Fix: drop them, or use --engine duckdb."
        )
    if args.spill_dir and role is Role.ANALYST:
        raise RoleError(
            "--spill-dir is for the data owner (it writes private intermediate data to disk). "
            "Fix: drop --spill-dir."
        )
    if role is Role.ANALYST and (args.memory_limit or args.timeout is not None):
        raise RoleError(
            "--memory-limit and --timeout are the data owner's: an analyst's limits follow "
            "from the dataset's declared size classes, so whether a query finishes never "
            "depends on a limit the analyst chose. Nothing was charged. Fix: drop them."
        )


def _engine(args, catalog: Catalog, timeout: float):
    if getattr(args, "engine", "duckdb") == "spark":
        from core.dpsql.execute.spark_engine import SparkEngine  # optional extra, on demand

        return SparkEngine(catalog, master=args.spark_master, timeout_s=timeout)
    return Engine(
        catalog, timeout_s=timeout, memory_limit=args.memory_limit,
        spill_directory=args.spill_dir,
    )  # fmt: skip


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
