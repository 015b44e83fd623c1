"""`dpx plan budget` (budget plans against a dataset's remaining budget; saving charges nothing)
and `dpx plan bounds` (contribution bounds from a charged DP log-histogram, its own release).
Registered by `core.cli.plan`."""

from __future__ import annotations

from core import cliargs
from core.cli.common import (
    add_dataset_argument,
    params_of,
    registry_info,
    registry_line,
    resolve,
    single_table,
)
from core.data.loading import load_table
from core.data.schema import require_columns
from core.errors import InputError
from core.governance.origin import Origin
from core.governance.planning import governed_bounds
from core.planning.bounds import DEFAULT_CLIP_SHARE, DEFAULT_EPSILON, STATISTICS, unit_values
from core.planning.budget import parse_item, plan_status, plan_vs_spend, save_split, split_budget
from core.privacy import Cost, PrivacyUnit
from core.registry import Claim

SCALE = cliargs.Real(0.0, 1e12, low_open=True, example="--scale 1")
CLIP_SHARE = cliargs.Real(0.0, 0.5, low_open=True, high_open=True, example="--clip-share 0.01")


def register_budget(plans, common) -> None:
    p = plans.add_parser(
        "budget",
        parents=[common],
        help="a budget plan: intended releases against a dataset's remaining budget",
        description="Lay intended releases (--item TOOL:EPSILON[/DELTA][xN][:key=value,...] or "
        "TOOL:share[*W]) against a registered dataset's remaining budget (draft), record the "
        "plan in the registry without charging anything (save), or show saved plans against "
        "what was spent (show).",
    )
    p.add_argument("budget_action", choices=("draft", "save", "show"), help="what to do")
    p.add_argument(
        "--item", action="append", type=cliargs.TEXT, default=[],
        help="a planned release, e.g. location:0.5x4:method=auto, sql:1/1e-5, pilot:0.05",
    )  # fmt: skip
    p.add_argument("--name", type=cliargs.NAME, default=None, help="the plan's name (save)")
    add_dataset_argument(p)
    p.set_defaults(handler=run_budget)


def run_budget(args) -> dict | str:
    if args.dataset is None:
        raise InputError("a budget plan belongs to a registered dataset: add --dataset NAME.")
    target = resolve(args, "plan", files=())
    registry, d = target.registry, target.dataset
    if args.budget_action == "show":
        return _show(args, registry, d)
    split = split_budget(
        d.name, Cost(*registry.remaining(d.name)), [parse_item(i) for i in args.item]
    )
    out = split.to_json()
    if args.budget_action == "save":
        saved = save_split(registry, target.role, split, args.name)
        out["saved"] = {"plan_id": saved.id, "name": saved.name, "charged": 0.0}
    if args.json:
        return out
    lines = [split.describe()]
    for a in split.allocations:
        more = "" if a.more_possible is None else f"; {a.more_possible} more would fit"
        lines.append(
            f"  {a.item.name}: epsilon {a.epsilon_each:g} each, {a.epsilon_total:g} in all, "
            f"{'fits' if a.fits else 'does NOT fit'}{more}"
        )
    if "saved" in out:
        lines.append(f"saved as plan #{out['saved']['plan_id']} (nothing charged)")
    return "\n".join(lines)


def _show(args, registry, d) -> dict | str:
    plans = registry.plans(d.name)
    releases = registry.releases(d.name)
    rows = [
        {"release_id": r.id, "tool": r.title, "epsilon": r.epsilon,
         "status": plan_status(r, plans, releases).value}
        for r in releases
    ]  # fmt: skip
    spends = [plan_vs_spend(p, plans, releases).to_json() for p in plans]
    eps_left, delta_left = registry.remaining(d.name)
    out = {
        "dataset": d.name,
        "remaining": {"epsilon": eps_left, "delta": delta_left},
        "plans": spends,
        "releases": rows,
    }
    if args.json:
        return out
    lines = [f"dataset '{d.name}': remaining epsilon {eps_left:g}, delta {delta_left:g}"]
    lines += [s["describe"] for s in spends] or ["no saved plan"]
    lines += [
        f"  #{r['release_id']} {r['tool']}: epsilon {r['epsilon']:g}, {r['status']}" for r in rows
    ]
    return "\n".join(lines)


def register_bounds(plans, common) -> None:
    p = plans.add_parser(
        "bounds",
        parents=[common],
        help="propose contribution bounds for a numeric column (a charged DP release)",
        description="Propose contribution bounds [L, U] for each unit's sum (or mean) of a "
        "numeric column from a DP log-histogram (its own charged release, tool 'bounds'), "
        "with the estimated share of units clipped.",
    )
    p.add_argument("input", nargs="?", type=cliargs.INPUT_FILE, help="CSV/Parquet table")
    p.add_argument("--column", type=cliargs.NAME, required=True, help="the numeric column")
    unit = p.add_mutually_exclusive_group()
    unit.add_argument("--uid", type=cliargs.NAME, help="the privacy-unit column")
    unit.add_argument("--row-is-unit", action="store_true", help="each row is one unit")
    p.add_argument("--statistic", choices=STATISTICS, default="sum", help="per unit (default sum)")
    p.add_argument(
        "--epsilon", type=cliargs.RELEASE_EPSILON, default=DEFAULT_EPSILON,
        help=f"charged for the histogram (default {DEFAULT_EPSILON:g})",
    )  # fmt: skip
    p.add_argument("--scale", type=SCALE, default=1.0, help="width of the smallest bin")
    p.add_argument(
        "--clip-share", type=CLIP_SHARE, default=DEFAULT_CLIP_SHARE,
        help="the share of units the bounds may clip (default 0.01)",
    )  # fmt: skip
    add_dataset_argument(p, optional=("input",))
    p.set_defaults(handler=run_bounds)


def run_bounds(args) -> dict | str:
    """A governed bounds release: ε charged before the table is read."""
    target = resolve(args, "bounds", files=("input",))
    if target.dataset is not None:
        d = target.dataset
        args.input = single_table(d, "plan bounds")
        if args.uid not in (None, d.uid):
            raise InputError(f"--uid {args.uid} differs from dataset '{d.name}''s unit {d.uid}.")
        uid = None if d.row_is_unit else d.uid
        if uid is None and not d.row_is_unit:
            raise InputError(f"dataset '{d.name}' declares no unit: bounds need one.")
        unit = d.unit
    else:
        if not args.input:
            raise InputError("dpx plan bounds needs INPUT or --dataset NAME.")
        if not args.uid and not args.row_is_unit:
            raise InputError("name the privacy unit: --uid COL or --row-is-unit.")
        uid = args.uid
        unit = PrivacyUnit.declared(uid, bool(args.row_is_unit) and not uid)
    columns = {"value": args.column, **({"unit": uid} if uid else {})}

    def load():
        frame = load_table(args.input)
        return unit_values(frame, args.column, uid, args.statistic)

    governed = governed_bounds(
        target.registry, target.role, target.dataset, target.noise, Origin.cli(params_of(args)),
        args.epsilon, Claim.of(unit), load, column=args.column, statistic=args.statistic,
        scale=args.scale, clip_share=args.clip_share,
        extra_checks=(lambda: require_columns(args.input, columns),),
    )  # fmt: skip
    out = governed.result.to_json()
    out["budget_item"] = f"bounds:{args.epsilon:g}"
    if governed.record is not None:
        out["registry"] = registry_info(target.registry, governed.record)
    if args.json:
        return out
    lines = [governed.result.describe()]
    if "registry" in out:
        lines.append(registry_line(out["registry"]))
    return "\n".join(lines)
