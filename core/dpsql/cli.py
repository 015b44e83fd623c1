"""`dpx sql`: run a DP SQL query over CSV/Parquet tables (the issue's CLI contract).

dpx sql --table NAME=FILE [--table NAME=FILE ...] [--public NAME=FILE ...] --uid COL
        (--query SQL | --query-file F) [--epsilon E] [--delta D] [--max-groups C]
        [--budget-epsilon TOTAL] [--seed S] [--explain] [--dialect duckdb|spark|bigquery|postgres]
        [--json] [--dry-run] [--export-bigquery FILE.sql]
Options written in the query's OPTIONS(...) take precedence over the flags.
"""

from __future__ import annotations

from pathlib import Path

from core.dpsql.catalog import Catalog
from core.dpsql.engine import Engine
from core.dpsql.export import to_bigquery
from core.dpsql.rewrite import DIALECTS
from core.dpsql.service import explain, prepare, run
from core.errors import InputError
from core.privacy import BudgetLedger, Noise


def register(sub, common) -> None:
    p = sub.add_parser(
        "sql",
        parents=[common],
        help="DP SQL: SELECT WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY over private tables",
        description="Run a differentially private SQL query; OPTIONS in the query win over flags.",
    )
    p.add_argument(
        "--table",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a private table (CSV or Parquet) holding the --uid column",
    )
    p.add_argument(
        "--public",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a public table (no privacy unit; joins freely)",
    )
    p.add_argument("--uid", required=True, help="the privacy-unit column of the private tables")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--query", help="the DP SQL query")
    src.add_argument("--query-file", help="a file holding the DP SQL query")
    p.add_argument("--epsilon", type=float, help="default epsilon if the query has none")
    p.add_argument("--delta", type=float, help="default delta if the query has none")
    p.add_argument("--max-groups", type=int, help="default max_groups_contributed (C_u)")
    p.add_argument(
        "--budget-epsilon",
        type=float,
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
        metavar="FILE.sql",
        help="write the query in BigQuery's SELECT WITH DIFFERENTIAL_PRIVACY syntax "
        "and exit; reads no data, charges nothing",
    )
    p.set_defaults(handler=handle)


def _pairs(values: list[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not name or not path:
            raise InputError(
                f"{flag} expects NAME=FILE, got '{v}'. Fix: e.g. {flag} orders=orders.csv"
            )
        out.append((name.strip(), path.strip()))
    return out


def handle(args) -> dict | str:
    if not args.table:
        raise InputError("dpx sql needs at least one private --table NAME=FILE.")
    catalog = Catalog()
    for name, path in _pairs(args.table, "--table"):
        catalog.add_file(name, Path(path), args.uid, private=True)
    for name, path in _pairs(args.public, "--public"):
        catalog.add_file(name, Path(path), None, private=False)
    if args.query_file:
        try:
            sql = Path(args.query_file).read_text()
        except OSError as err:
            raise InputError(
                f"cannot read --query-file {args.query_file}: {err.strerror}"
            ) from None
    else:
        sql = args.query
    noise = Noise.from_seed(args.seed)
    defaults = {
        "epsilon": args.epsilon,
        "delta": args.delta,
        "max_groups_contributed": args.max_groups,
    }
    prepared = prepare(sql, catalog, noise, defaults)
    if args.export_bigquery:
        text, warnings = to_bigquery(prepared.query, args.uid)
        Path(args.export_bigquery).write_text(text + ";\n")
        out = {"bigquery_export": args.export_bigquery, "warnings": warnings, "sql": text}
        return out if args.json else "\n".join([text, *[f"warning: {w}" for w in warnings]])
    if args.dry_run:
        info = explain(prepared, args.dialect)
        info["mode"] = noise.mode
        return info if args.json else _explain_text(info)
    ledger = BudgetLedger(total_epsilon=args.budget_epsilon)
    result = run(prepared, Engine(catalog), noise, ledger)
    out = result.to_dict()
    if args.explain:
        out["rewritten_sql"] = prepared.plan.sql(args.dialect)
        out["dialect"] = args.dialect
    return out if args.json else _result_text(out)


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
