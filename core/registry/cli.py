"""`dpx dataset add|show|list|budget`: register datasets and manage their budgets (owner).

dpx dataset add NAME --table T=FILE [--table T2=FILE2 ...] [--public P=FILE ...] [--uid COL]
                --epsilon E [--delta D] [--max-epsilon-per-query E1] [--max-delta-per-query D1]
                [--teaching] [--registry DIR] [--json]
dpx dataset show NAME [--registry DIR] --json
dpx dataset list [--registry DIR] [--json]
dpx dataset budget NAME --epsilon E [--delta D] [--registry DIR] [--json]
dpx dataset backup --out FILE [--registry DIR]      (SQLite online backup: safe while others run)
dpx dataset restore FILE [--force] [--registry DIR] (stop every dpx first; see the README)
"""

from __future__ import annotations

from pathlib import Path

from core import cliargs
from core.errors import InputError
from core.registry.models import Dataset, Policy, RunKind
from core.registry.registry import Registry


def register(sub, common) -> None:
    p = sub.add_parser(
        "dataset",
        parents=[common],
        help="registered datasets: add, show, list, budget",
        description="Register datasets with a persistent privacy budget (basic composition).",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    actions.required = True

    add = actions.add_parser("add", parents=[common], help="register a dataset")
    add.add_argument("name", type=cliargs.NAME, metavar="NAME")
    add.add_argument(
        "--table", type=cliargs.TABLE, action="append", default=[], metavar="T=FILE", required=True
    )
    add.add_argument("--public", type=cliargs.TABLE, action="append", default=[], metavar="P=FILE")
    add.add_argument(
        "--uid", type=cliargs.NAME, default=None, help="the privacy-unit column, where there is one"
    )
    add.add_argument("--epsilon", type=cliargs.EPSILON, required=True, help="total epsilon budget")
    add.add_argument(
        "--delta", type=cliargs.DELTA, default=0.0, help="total delta budget (default 0)"
    )
    add.add_argument("--max-epsilon-per-query", type=cliargs.caps()[0], default=None)
    add.add_argument("--max-delta-per-query", type=cliargs.caps()[1], default=None)
    add.add_argument(
        "--teaching",
        action="store_true",
        help="synthetic/demo data: seeded (reproducible) noise is allowed",
    )
    add.set_defaults(handler=run_add)

    show = actions.add_parser("show", parents=[common], help="a dataset's budget and releases")
    show.add_argument("name", type=cliargs.NAME, metavar="NAME")
    show.set_defaults(handler=run_show)

    lst = actions.add_parser("list", parents=[common], help="every registered dataset")
    lst.set_defaults(handler=run_list)

    budget = actions.add_parser(
        "budget", parents=[common], help="set (raise) a dataset's total budget; recorded"
    )
    budget.add_argument("name", type=cliargs.NAME, metavar="NAME")
    budget.add_argument("--epsilon", type=cliargs.EPSILON, default=None, help="new total epsilon")
    budget.add_argument("--delta", type=cliargs.DELTA, default=None, help="new total delta")
    budget.set_defaults(handler=run_budget)

    saved = actions.add_parser(
        "backup", parents=[common], help="copy the registry to a file (consistent while in use)"
    )
    saved.add_argument(
        "--out",
        type=cliargs.OUTPUT_FILE,
        required=True,
        metavar="FILE",
        help="the backup file to write",
    )
    saved.set_defaults(handler=run_backup)

    back = actions.add_parser(
        "restore", parents=[common], help="replace the registry by a backup (stop dpx first)"
    )
    back.add_argument(
        "backup",
        type=cliargs.BACKUP_FILE,
        metavar="FILE",
        help="a file written by `dpx dataset backup`",
    )
    back.add_argument(
        "--force",
        action="store_true",
        help="replace a registry that holds datasets or releases, or is damaged (moved aside)",
    )
    back.set_defaults(handler=run_restore)


def pairs(values: list[str], flag: str) -> list[tuple[str, str]]:
    out = []
    for v in values:
        name, sep, path = v.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise InputError(f"{flag} expects NAME=FILE, got '{v}'. Fix: e.g. {flag} t=data.csv")
        out.append((name.strip(), path.strip()))
    return out


def dataset_json(registry: Registry, d: Dataset) -> dict:
    """The `dpx dataset show --json` object."""
    eps_spent, delta_spent = registry.spent(d.name)
    runs = registry.releases(d.name)
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
        "teaching": d.teaching,
        "composition": "basic (sums of epsilon and of delta)",
        "tables": [
            {"name": t.name, "path": t.path, "sha256": t.sha256, "public": t.public}
            for t in d.tables
        ],
        "releases": [
            {k: r.summary()[k] for k in ("id", "tool", "epsilon", "delta", "time", "mode")}
            | {"status": r.status.value}
            for r in runs
            if r.kind is RunKind.RELEASE
        ],
        "demo_runs": [r.summary() for r in runs if r.kind is RunKind.DEMO],
        "refusals": len(registry.refusals(d.name)),
        "budget_history": [
            {
                "time": c.time,
                "epsilon_before": c.epsilon_before,
                "epsilon_after": c.epsilon_after,
                "delta_before": c.delta_before,
                "delta_after": c.delta_after,
            }
            for c in registry.budget_history(d.name)
        ],
    }


def _text(info: dict) -> str:
    lines = [
        f"{info['name']}: epsilon spent {info['epsilon_spent']:g} of {info['epsilon_total']:g} "
        f"(remaining {info['epsilon_remaining']:g}); delta spent {info['delta_spent']:g} of "
        f"{info['delta_total']:g}" + (" [teaching]" if info["teaching"] else "")
    ]
    for r in info["releases"]:
        lines.append(
            f"  #{r['id']} {r['time']} {r['tool']}: epsilon {r['epsilon']:g}, delta "
            f"{r['delta']:g}, {r['mode']} ({r['status']})"
        )
    return "\n".join(lines)


def run_add(args) -> dict | str:
    registry = Registry(args.registry)
    policy = Policy(args.epsilon, args.delta, args.max_epsilon_per_query, args.max_delta_per_query)
    d = registry.add_dataset(
        args.name,
        pairs(args.table, "--table"),
        policy,
        public=pairs(args.public, "--public"),
        uid=args.uid,
        teaching=args.teaching,
    )
    info = dataset_json(registry, d)
    return info if args.json else f"registered {d.name}\n" + _text(info)


def run_show(args) -> dict | str:
    registry = Registry(args.registry)
    info = dataset_json(registry, registry.dataset(args.name))
    return info if args.json else _text(info)


def run_list(args) -> dict | str:
    registry = Registry(args.registry)
    infos = [dataset_json(registry, d) for d in registry.datasets()]
    if args.json:
        return {"registry": str(registry.directory), "datasets": infos}
    if not infos:
        return f"no registered datasets in {registry.directory}"
    return "\n".join(_text(i).splitlines()[0] for i in infos)


def run_budget(args) -> dict | str:
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


def run_backup(args) -> dict | str:
    from core.registry.store import backup, default_directory

    directory = Path(args.registry).expanduser() if args.registry else default_directory()
    path = backup(directory, args.out)
    if args.json:
        return {"registry": str(directory), "backup": str(path)}
    return f"registry {directory} backed up to {path}"


def run_restore(args) -> dict | str:
    from core.registry.store import default_directory, restore

    directory = Path(args.registry).expanduser() if args.registry else default_directory()
    path = restore(args.backup, directory, force=args.force)
    if args.json:
        return {"registry": str(path), "restored_from": str(args.backup)}
    return f"registry {path} restored from {args.backup}"
