"""`dpx dataset add|show|list|schema|budget|policy|reconcile|backup|restore|share`: registered
datasets, their declared public facts and their budgets.

dpx dataset add NAME --table T=FILE [--table T2=FILE2 ...] [--public P=FILE ...]
                (--uid COL | --row-is-unit) --epsilon E [--delta D]
                [--max-epsilon-per-query E1] [--max-delta-per-query D1]
                [--pp-columns C1,C2] [--teaching] [--schema T=FILE.json] [--max-rows T=N]
dpx dataset show NAME [--json]        budget, schemas, releases, charges never delivered, history
dpx dataset schema NAME [--table T] [--set ...] [--max-rows N] [--from-file F]   (see
                                      core.cli.dataset_schema; editing is the owner's)
dpx dataset list [--json]
dpx dataset budget NAME --epsilon E [--delta D]      (owner) raise a total; recorded
dpx dataset policy NAME --pp-columns C1,C2           (owner) what PP may publish unchanged
dpx dataset reconcile [NAME]                         (owner) close charges never delivered
dpx dataset backup --out FILE     (SQLite online backup: consistent while others run)
dpx dataset restore FILE [--force] [--allow-spend-decrease]   (owner; stop every dpx first)
    recorded in each dataset's budget history (backup name and SHA-256, spend before/after);
    a restore that lowers a dataset's spend needs --allow-spend-decrease

Every dataset states its privacy unit at registration: `--uid COL` (the column saying whose
rows or points they are) or `--row-is-unit` (each row is one person; a row id is added when it
is read). In analyst mode (`DPX_MODE=analyst`) only `show` and `list` run, without file paths
or hashes of the raw bytes.
"""

from __future__ import annotations

from core import cliargs
from core.cli.dataset_backup import history_json, history_words, register_backup
from core.cli.dataset_schema import (
    change_words,
    proposed_tables,
    register_schema,
    schema_note,
    schema_table,
    schemas_for_add,
    schemas_json,
)
from core.cli.dataset_shares import register_share, share_lines, shares_json
from core.data.declared import TableSchema
from core.data.schema import columns_of
from core.errors import InputError
from core.governance import Role, current_role, require_owner
from core.privacy.accounting import Accounting
from core.registry import (
    Dataset,
    Policy,
    Registry,
    RunKind,
    SchemaChange,
)


def register(sub, common) -> None:
    p = sub.add_parser(
        "dataset",
        parents=[common],
        help="registered datasets: add, show, list, schema, budget, policy, reconcile",
        description="Register datasets with a persistent privacy budget (basic or pld accounting).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    actions.required = True

    add = actions.add_parser("add", parents=[common], help="register a dataset (owner)")
    add.add_argument("name", type=cliargs.NAME, metavar="NAME")
    add.add_argument(
        "--table", type=cliargs.TABLE, action="append", default=[], metavar="T=FILE", required=True
    )
    add.add_argument("--public", type=cliargs.TABLE, action="append", default=[], metavar="P=FILE")
    unit = add.add_mutually_exclusive_group(required=True)
    unit.add_argument(
        "--uid",
        type=cliargs.NAME,
        default=None,
        help="the privacy-unit column: whose rows these are",
    )
    unit.add_argument(
        "--row-is-unit",
        action="store_true",
        help="each row is one person (a row id is added when the table is read)",
    )
    add.add_argument("--epsilon", type=cliargs.EPSILON, required=True, help="total epsilon budget")
    add.add_argument(
        "--delta", type=cliargs.DELTA, default=0.0, help="total delta budget (default 0)"
    )
    add.add_argument(
        "--accounting",
        choices=[a.value for a in Accounting],
        default=Accounting.BASIC.value,
        help="how releases compose: basic (sums, default) or pld (privacy loss distributions, "
        "epsilon at the total delta, never above basic); fixed after the first release",
    )
    add.add_argument("--max-epsilon-per-query", type=cliargs.caps()[0], default=None)
    add.add_argument("--max-delta-per-query", type=cliargs.caps()[1], default=None)
    add.add_argument(
        "--pp-columns",
        type=cliargs.TEXT,
        default="",
        metavar="C1,C2",
        help="columns PP may publish unchanged beside the perturbed attribute (default: none)",
    )
    add.add_argument(
        "--teaching",
        action="store_true",
        help="synthetic/demo data: seeded (reproducible) noise is allowed",
    )
    add.add_argument(
        "--schema",
        type=cliargs.TABLE,
        action="append",
        default=[],
        metavar="T=FILE.json",
        help="table T's declared schema (TableSchema JSON; default: proposed from the file)",
    )
    add.add_argument(
        "--max-rows",
        type=cliargs.TEXT,
        action="append",
        default=[],
        metavar="T=N",
        help="table T's size class, an upper bound on its rows (default: from the file)",
    )
    add.set_defaults(handler=run_add)

    show = actions.add_parser("show", parents=[common], help="a dataset's budget and releases")
    show.add_argument("name", type=cliargs.NAME, metavar="NAME")
    show.set_defaults(handler=run_show)

    register_schema(actions, common)

    lst = actions.add_parser("list", parents=[common], help="every registered dataset")
    lst.set_defaults(handler=run_list)

    budget = actions.add_parser(
        "budget", parents=[common], help="set (raise) a dataset's total budget (owner)"
    )
    budget.add_argument("name", type=cliargs.NAME, metavar="NAME")
    budget.add_argument("--epsilon", type=cliargs.EPSILON, default=None, help="new total epsilon")
    budget.add_argument("--delta", type=cliargs.DELTA, default=None, help="new total delta")
    budget.set_defaults(handler=run_budget)

    policy = actions.add_parser(
        "policy", parents=[common], help="what PP may publish beside the perturbed SA (owner)"
    )
    policy.add_argument("name", type=cliargs.NAME, metavar="NAME")
    policy.add_argument(
        "--pp-columns",
        type=cliargs.TEXT,
        required=True,
        metavar="C1,C2",
        help="the complete list of publishable columns (empty string: none)",
    )
    policy.set_defaults(handler=run_policy)

    rec = actions.add_parser(
        "reconcile",
        parents=[common],
        help="close releases charged but never delivered (owner; the charges stay)",
    )
    rec.add_argument("name", type=cliargs.NAME, metavar="NAME", nargs="?", default=None)
    rec.set_defaults(handler=run_reconcile)

    register_backup(actions, common)
    register_share(actions, common)


def pairs(values: list[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise InputError(f"{flag} expects NAME=FILE, got '{v}'. Fix: e.g. {flag} t=data.csv")
        out.append((name.strip(), path.strip()))
    return out


def column_list(text: str) -> list[str]:
    return [c.strip() for c in (text or "").split(",") if c.strip()]


def _check_columns(tables: list[tuple[str, str]], uid: str | None, publishable: list[str]):
    """The unit column must be in every private table; a publishable column in at least one
    (schema only: headers and footers, no value read)."""
    seen: set[str] = set()
    for name, path in tables:
        columns = columns_of(path)
        seen.update(columns)
        if uid is not None and uid not in columns:
            raise InputError(
                f"the unit column '{uid}' is not in table '{name}' (columns: "
                f"{', '.join(columns)}). Fix: name the column that says whose rows these are "
                "(--uid COL), or --row-is-unit if each row is one person."
            )
    missing = [c for c in publishable if c not in seen]
    if missing:
        raise InputError(
            f"--pp-columns names {', '.join(missing)}, not in the private tables. Fix: list "
            "existing columns."
        )


def dataset_json(registry: Registry, d: Dataset, role: Role = Role.OWNER) -> dict:
    """The `dpx dataset show --json` object (an analyst sees no paths or hashes of raw bytes)."""
    composed = registry.composition(d.name)
    eps_spent, delta_spent = composed.spent.epsilon, composed.spent.delta
    basic = composed.basic  # Σε, Σδ of the charges: basic composition, whatever the accounting
    runs = registry.releases(d.name)
    stranded = registry.stranded(d.name)
    history = registry.schema_history(d.name)
    proposed = proposed_tables(d, history)
    tables = [{"name": t.name, "public": t.public} for t in d.tables]
    if role is Role.OWNER:
        tables = [
            {"name": t.name, "path": t.path, "sha256": t.sha256, "public": t.public}
            for t in d.tables
        ]
    return {
        "name": d.name,
        "epsilon_total": d.policy.epsilon_total,
        "epsilon_spent": eps_spent,
        "delta_total": d.policy.delta_total,
        "delta_spent": delta_spent,
        "epsilon_remaining": max(0.0, d.policy.epsilon_total - eps_spent),
        "delta_remaining": max(0.0, d.policy.delta_total - delta_spent),
        "max_epsilon_per_query": d.policy.max_epsilon_per_query,
        "max_delta_per_query": d.policy.max_delta_per_query,
        "uid": d.uid,
        "row_is_unit": d.row_is_unit,
        "unit": d.unit_words,
        "pp_columns": list(d.publishable),
        "teaching": d.teaching,
        "composition": d.accounting.words,
        "accounting": d.accounting.value,
        "spent_by_accounting": {
            Accounting.BASIC.value: {"epsilon": basic.epsilon, "delta": basic.delta},
            d.accounting.value: {
                "epsilon": eps_spent,
                "delta": delta_spent,
                "guarantee": [composed.epsilon, composed.delta],
            },
        },
        "tables": tables,
        "releases": [
            {k: r.summary()[k] for k in ("id", "tool", "epsilon", "delta", "time", "mode")}
            | {"status": r.status.value, "method": r.method}
            for r in runs
            if r.kind is RunKind.RELEASE
        ],
        "charged_not_delivered": [
            {"id": r.id, "tool": r.title, "time": r.time, "epsilon": r.epsilon}
            for r in stranded
            if r.kind is RunKind.RELEASE
        ],
        "demo_runs": [r.summary() for r in runs if r.kind is RunKind.DEMO],
        "refusals": len(registry.refusals(d.name)),
        "shares": shares_json(registry, d.name),
        "budget_history": [history_json(c, role) for c in registry.budget_history(d.name)],
        "schemas": schemas_json(d),
        "schema_history": [c.to_json() for c in history],
        "schema_proposed": proposed,
        "schema_note": schema_note(d, proposed),
    }


def _accounting_line(info: dict) -> str:
    """Spent under basic and under the dataset's accounting (the one its checks use)."""
    basic = info["spent_by_accounting"]["basic"]
    line = f"  accounting: {info['accounting']}; spent under basic: epsilon {basic['epsilon']:g}, "
    line += f"delta {basic['delta']:g}"
    if info["accounting"] != "basic":
        own = info["spent_by_accounting"][info["accounting"]]
        eps, delta = own["guarantee"]
        line += (
            f"; under {info['accounting']} (this dataset's): epsilon {own['epsilon']:g} "
            f"(guarantee epsilon {eps:g} at delta {delta:g}; delta {own['delta']:g} spent by "
            "approximate-DP mechanisms)"
        )
    return line


def _text(info: dict) -> str:
    lines = [
        f"{info['name']}: epsilon spent {info['epsilon_spent']:g} of {info['epsilon_total']:g} "
        f"(remaining {info['epsilon_remaining']:g}); delta spent {info['delta_spent']:g} of "
        f"{info['delta_total']:g}; unit: {info['unit']}"
        + (" [teaching]" if info["teaching"] else ""),
        _accounting_line(info),
    ]
    for r in info["releases"]:
        what = r["tool"] + (f" · {r['method']}" if r.get("method") else "")
        lines.append(
            f"  #{r['id']} {r['time']} {what}: epsilon {r['epsilon']:g}, delta "
            f"{r['delta']:g}, {r['mode']} ({r['status']})"
        )
    for r in info["charged_not_delivered"]:
        lines.append(
            f"  ! #{r['id']} {r['time']} {r['tool']}: charged epsilon {r['epsilon']:g}, never "
            "delivered (`dpx dataset reconcile` closes it; the charge stays)"
        )
    lines += share_lines(info["shares"])
    lines += ["budget history:"] * bool(info["budget_history"])
    lines += ["  " + history_words(c) for c in info["budget_history"]]
    lines.append("declared public facts:")
    for table, schema in info["schemas"].items():
        declared = None if schema is None else TableSchema.from_json(schema)
        lines += ["  " + line for line in schema_table(table, declared)]
    lines.append("schema history:")
    lines += ["  " + change_words(SchemaChange.from_json(c)) for c in info["schema_history"]]
    return "\n".join(lines)


def run_add(args) -> dict | str:
    require_owner(current_role(), "registering a dataset")
    tables = pairs(args.table, "--table")
    publishable = column_list(args.pp_columns)
    _check_columns(tables, args.uid, publishable)
    public = pairs(args.public, "--public")
    schemas = schemas_for_add(args, tables + public)
    registry = Registry(args.registry)
    policy = Policy(args.epsilon, args.delta, args.max_epsilon_per_query, args.max_delta_per_query)
    d = registry.add_dataset(
        args.name,
        tables,
        policy,
        public=public,
        uid=args.uid,
        teaching=args.teaching,
        row_is_unit=args.row_is_unit,
        publishable=publishable,
        schemas=schemas,
        accounting=args.accounting,
    )
    info = dataset_json(registry, d)
    if args.json:
        return info
    note = (
        "\nunit: one row per person — a row id is added when the table is read"
        if d.row_is_unit
        else ""
    )
    return f"registered {d.name}\n" + _text(info) + note + "\n" + info["schema_note"]


def run_show(args) -> dict | str:
    registry = Registry(args.registry)
    info = dataset_json(registry, registry.dataset(args.name), current_role())
    return info if args.json else _text(info)


def run_list(args) -> dict | str:
    registry = Registry(args.registry)
    role = current_role()
    infos = [dataset_json(registry, d, role) for d in registry.datasets()]
    if args.json:
        out = {"datasets": infos}
        return out | ({"registry": str(registry.directory)} if role is Role.OWNER else {})
    if not infos:
        return "no registered datasets"
    return "\n".join(_text(i).splitlines()[0] for i in infos)


def run_budget(args) -> dict | str:
    require_owner(current_role(), "changing a dataset's budget")
    if args.epsilon is None and args.delta is None:
        raise InputError("dpx dataset budget needs --epsilon E (and/or --delta D).")
    registry = Registry(args.registry)
    change = registry.set_budget(args.name, args.epsilon, args.delta)
    info = dataset_json(registry, registry.dataset(args.name))
    if args.json:
        return info
    return (
        f"{args.name}: total epsilon {change.epsilon_before:g} -> {change.epsilon_after:g}, "
        f"delta {change.delta_before:g} -> {change.delta_after:g} (recorded)\n" + _text(info)
    )


def run_policy(args) -> dict | str:
    require_owner(current_role(), "setting what PP may publish")
    registry = Registry(args.registry)
    d = registry.dataset(args.name)
    columns = column_list(args.pp_columns)
    _check_columns([(t.name, t.path) for t in d.private_tables], None, columns)
    d = registry.set_publishable(args.name, columns)
    info = dataset_json(registry, d)
    if args.json:
        return info
    shown = ", ".join(d.publishable) or "none (the perturbed attribute only)"
    return f"{d.name}: PP may publish unchanged: {shown}"


def run_reconcile(args) -> dict | str:
    require_owner(current_role(), "reconciling charges")
    registry = Registry(args.registry)
    if args.name is not None:
        registry.dataset(args.name)  # an unknown name is refused with the registered ones
    closed = registry.reconcile(args.name)
    out = [
        {"id": r.id, "tool": r.title, "dataset": r.dataset, "time": r.time, "epsilon": r.epsilon}
        for r in closed
    ]
    if args.json:
        return {"closed": out}
    if not out:
        return "nothing to reconcile: every charged release was delivered or is still running"
    return "\n".join(
        f"#{r['id']} {r['tool']} on {r['dataset'] or '(unregistered)'}: closed as failed, "
        f"charge of epsilon {r['epsilon']:g} kept"
        for r in out
    )
