"""`dpx plan`: plan before spending — from the accuracy needed to the ε each release costs.

    dpx plan release INPUT|--dataset NAME (--bbox B|--region R) [--grid G] --method M
                     --target-mre T [--query-area F]
                     [--pilot-epsilon E | --pilot-release ID | --public-n N [--shape S]]
    dpx plan sql (--table T=F ... --uid COL | --dataset NAME) --query Q
                 --target NAME=HALF_WIDTH[@UNITS] [...] [--confidence 0.95]
    dpx plan balance [INPUT|--dataset NAME] --sa COL --categories A,B,... --target-error X
                     [--rho1 R] [--rho2 R] [--rows N] [--shares A=0.5,...]
    dpx plan budget draft|save|show --dataset NAME [--item TOOL:EPS[xN][:k=v] ...]
    dpx plan bounds INPUT|--dataset NAME --column COL [--epsilon E]   (a charged release)

Planners read no raw value and charge nothing, so they work in analyst mode (DPX_MODE=analyst:
registered datasets only). Two helpers read data and are therefore releases of their own,
charged and recorded like any other: the location planner's pilot (unless a recorded pilot or
a declared public size is used) and `dpx plan bounds`. Every plan states its basis in one
sentence (`basis`, and `describe` for the whole answer).
"""

from __future__ import annotations

from pathlib import Path

from core import cliargs
from core.cli.common import (
    add_dataset_argument,
    params_of,
    registry_info,
    registry_line,
    resolve,
    single_table,
)
from core.cli.location import _NEGATIVE_VALUE, GRID_HELP, MAX_POINTS_PER_PERSON
from core.cli.location_run import bbox_from_args, unit_of
from core.data.loading import load_table
from core.data.schema import require_columns
from core.errors import InputError
from core.governance import Role
from core.governance.origin import Origin
from core.governance.planning import governed_pilot, recorded_pilot
from core.planning.location import plan_location, recommended_methods
from core.planning.pilot import DEFAULT_PILOT_EPSILON
from core.planning.pp import PPShape, plan_pp, rho_frontier, strictest_rho2
from core.planning.shape import DeclaredShape, PilotShape, ShapeKind
from core.planning.sql import plan_sql
from core.planning.sql_targets import parse_target
from core.registry import Tool
from core.spatial.pipeline import DEFAULT_GRID

TARGET_MRE = cliargs.Real(0.0, 1e6, low_open=True, example="--target-mre 0.1")
QUERY_AREA = cliargs.Real(0.0, 1.0, low_open=True, example="--query-area 0.05")
PUBLIC_N = cliargs.Integer(10, 100_000_000, example="--public-n 50000")
CONFIDENCE = cliargs.Real(0.5, 1.0, high_open=True, example="--confidence 0.95")
TARGET_ERROR = cliargs.Real(0.0, 1.0, low_open=True, high_open=True, example="--target-error 0.02")
ROWS = cliargs.Integer(2, 10**10, example="--rows 5000")
SIM_SEED = cliargs.Integer(0, 2**31 - 1, example="--sim-seed 0")


def register(sub, common) -> None:
    p = sub.add_parser(
        "plan",
        parents=[common],
        help="plan before spending: the epsilon a release needs for a target accuracy",
        description=__doc__.split("\n\n")[0],
    )
    plans = p.add_subparsers(dest="action", metavar="WHAT", parser_class=type(p))
    _register_release(plans, common)
    _register_sql(plans, common)
    _register_balance(plans, common)
    from core.cli.plan_budget import register_bounds, register_budget

    register_budget(plans, common)
    register_bounds(plans, common)
    p.set_defaults(handler=_no_action(p))


def _no_action(parser):
    def run(args):
        raise InputError(
            "dpx plan needs what to plan: release, sql, balance, budget or bounds "
            "(see 'dpx plan --help')."
        )

    return run


# -- location ---------------------------------------------------------------------------------
def _register_release(plans, common) -> None:
    p = plans.add_parser(
        "release",
        parents=[common],
        help="plan a location histogram: the epsilon per method for a target MRE",
        description="Plan a location histogram from a target MRE. It rests on a charged pilot "
        "(a PrivTree histogram at --pilot-epsilon, its own release), a recorded pilot "
        "(--pilot-release ID) or a declared public size and shape (--public-n N --shape S).",
    )
    p._negative_number_matcher = _NEGATIVE_VALUE
    p.add_argument("input", type=cliargs.INPUT_FILE, metavar="INPUT", help="CSV/Parquet points")
    p.add_argument("--lat", type=cliargs.NAME, default=None, help="latitude column")
    p.add_argument("--lon", type=cliargs.NAME, default=None, help="longitude column")
    p.add_argument(
        "--bbox", type=cliargs.BBOX, default=None, help="public MINLON,MINLAT,MAXLON,MAXLAT"
    )
    p.add_argument("--region", type=cliargs.NAME, default=None, help="a named public region")
    p.add_argument("--uid", metavar="COL", type=cliargs.NAME, default=None, help="person column")
    p.add_argument(
        "--max-points-per-person", metavar="K", type=MAX_POINTS_PER_PERSON, default=None,
        help="with --uid: at most K points per person",
    )  # fmt: skip
    p.add_argument("--grid", type=cliargs.GRID, default=DEFAULT_GRID, help=GRID_HELP)
    p.add_argument("--grid-cols", type=cliargs.GRID, default=None, help="grid columns M")
    p.add_argument(
        "--method", type=cliargs.TEXT, default="auto",
        help="method(s) to plan, comma-separated (auto = Recommended; default auto)",
    )  # fmt: skip
    p.add_argument("--target-mre", type=TARGET_MRE, required=True, help="the MRE to reach")
    p.add_argument(
        "--query-area", type=QUERY_AREA, default=None,
        help="plan for range queries of this share of the box (default: 2, 6 and 10 %%)",
    )  # fmt: skip
    basis = p.add_mutually_exclusive_group()
    basis.add_argument(
        "--pilot-epsilon", type=cliargs.RELEASE_EPSILON, default=None,
        help=f"epsilon of the charged pilot (default {DEFAULT_PILOT_EPSILON:g})",
    )  # fmt: skip
    basis.add_argument(
        "--pilot-release", type=cliargs.RELEASE_ID, default=None,
        help="reuse a recorded pilot release (nothing charged)",
    )  # fmt: skip
    basis.add_argument(
        "--public-n", type=PUBLIC_N, default=None,
        help="a declared public number of points instead of a pilot (nothing charged)",
    )  # fmt: skip
    p.add_argument(
        "--shape", choices=[k.value for k in ShapeKind], default=ShapeKind.CITY.value,
        help="with --public-n: the declared shape (default city)",
    )  # fmt: skip
    p.add_argument(
        "--sim-seed", type=SIM_SEED, default=0,
        help="seed of the simulations (they release nothing; plans are reproducible)",
    )  # fmt: skip
    add_dataset_argument(p, optional=("input",))
    p.set_defaults(handler=run_release)


def run_release(args) -> dict | str:
    """Plan a location histogram; the pilot, when one is drawn, is a governed release."""
    methods = recommended_methods(args.method)
    sizes = (args.query_area,) if args.query_area else None
    pilot_info = None
    if args.public_n is not None:  # a declaration: no data is read, in any role
        if args.input:
            raise InputError("--public-n declares the data's size: drop INPUT (nothing is read).")
        rows = args.grid
        shape = DeclaredShape(args.public_n, ShapeKind(args.shape), rows, args.grid_cols or rows)
        unit = unit_of(args)
    else:
        target = resolve(args, Tool.LOCATION.value, files=("input",))
        if args.pilot_release is not None:
            if target.registry is None:
                raise InputError("--pilot-release needs the registry; none could be opened.")
            d = None if target.dataset is None else target.dataset.name
            pilot = recorded_pilot(target.registry, args.pilot_release, d)
        else:
            pilot, record = _draw_pilot(args, target)
            if record is not None:
                pilot_info = registry_info(target.registry, record)
        shape, unit = PilotShape(pilot), pilot.unit
        if (pilot.rows, pilot.cols) != (args.grid, args.grid_cols or args.grid):
            raise InputError(
                f"the pilot is on a {pilot.rows} x {pilot.cols} grid; plan on the same grid "
                f"(--grid {pilot.rows} --grid-cols {pilot.cols})."
            )
    kw = {} if sizes is None else {"query_sizes": sizes}
    plan = plan_location(shape, methods, args.target_mre, unit=unit, seed=args.sim_seed, **kw)
    out = plan.to_json()
    if isinstance(shape, PilotShape):
        out["pilot"] = {
            "release_id": shape.pilot.release_id,
            "epsilon": shape.pilot.epsilon,
            "leaves": len(shape.pilot.leaves),
            "noisy_n": shape.pilot.noisy_n,
            **({"registry": pilot_info} if pilot_info else {}),
        }
    best = plan.best
    if best is not None:
        out["budget_item"] = f"location:{best.epsilon:g}:method={best.method}"
    if args.json:
        return out
    return _release_text(plan, out)


def _draw_pilot(args, target):
    """The pilot as a governed release: charged before the points are read."""
    from core.cli.common import declared_schema
    from core.cli.location_run import _use_dataset
    from core.spatial.io import read_points_table
    from core.spatial.pipeline import prepare
    from core.spatial.scan import scan_prepare

    if target.dataset is not None:
        _use_dataset(args, target)
    elif not args.input:
        raise InputError("dpx plan release needs INPUT, --dataset NAME or --public-n N.")
    unit = unit_of(args)
    bbox = bbox_from_args(args)
    if bbox is None:
        raise InputError(
            "no --bbox given. The bounding box is public and must not come from the private "
            "data: pass --bbox MINLON,MINLAT,MAXLON,MAXLAT or --region NAME."
        )
    eps = args.pilot_epsilon if args.pilot_epsilon is not None else DEFAULT_PILOT_EPSILON
    columns = {"latitude": args.lat, "longitude": args.lon, "person": unit.column}

    schema = None if target.dataset is None else declared_schema(target.dataset)

    def load(noise):
        options = {"unit": unit, "noise": noise, "total": target.role is Role.ANALYST}
        if schema is not None:  # a registered table is read as declared (no inference)
            data = scan_prepare(args.input, args.lat, args.lon, bbox, args.grid, args.grid_cols,
                                schema=schema, **options)  # fmt: skip
        else:
            df = read_points_table(args.input, args.lat, args.lon, unit.column)
            data = prepare(df, args.lat, args.lon, bbox, args.grid, args.grid_cols, **options)
        return data.F, data.grid.bbox

    door = Origin.cli({**params_of(args), "grid": args.grid, "grid_cols": args.grid_cols or args.grid})
    governed = governed_pilot(
        target.registry, target.role, target.dataset, target.noise, door, eps, unit, load,
        extra_checks=(lambda: require_columns(args.input, columns),),
    )  # fmt: skip
    return governed.result, governed.record


def _release_text(plan, out: dict) -> str:
    lines = [plan.describe()]
    for m in plan.methods:
        if m.epsilon is None:
            lines.append(f"  {m.label}: not reached up to the largest epsilon searched")
            continue
        low, mid, high = m.predicted.as_list()
        careful = "" if m.cautious_epsilon is None else f"; cautious epsilon {m.cautious_epsilon:g}"
        lines.append(
            f"  {m.label}: epsilon {m.epsilon:g}, predicted MRE {mid:.3g} "
            f"[{low:.3g}, {high:.3g}]{careful}"
        )
    if "pilot" in out and out["pilot"].get("registry"):
        lines.append("pilot: " + registry_line(out["pilot"]["registry"]))
    return "\n".join(lines)


# -- DP SQL -----------------------------------------------------------------------------------
def _register_sql(plans, common) -> None:
    p = plans.add_parser(
        "sql",
        parents=[common],
        help="plan a DP SQL query: the smallest epsilon meeting per-aggregate targets",
        description="Plan a DP SQL query backwards from targets (NAME=HALF_WIDTH, "
        "NAME=HALF_WIDTH@UNITS, NAME=PCT%@UNITS). Reads the tables' schemas only.",
    )
    p.add_argument("--table", action="append", type=cliargs.TABLE, default=[], metavar="NAME=FILE")
    p.add_argument("--public", action="append", type=cliargs.TABLE, default=[], metavar="NAME=FILE")
    unit = p.add_mutually_exclusive_group()
    unit.add_argument("--uid", type=cliargs.NAME, help="the privacy-unit column")
    unit.add_argument("--row-is-unit", action="store_true", help="each row is one unit")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--query", type=cliargs.QUERY, help="the DP SQL query")
    src.add_argument("--query-file", type=cliargs.QUERY_FILE, help="a file holding the query")
    p.add_argument(
        "--target", action="append", type=cliargs.TEXT, default=[], required=True,
        metavar="NAME=HALF_WIDTH", help="an aggregate's target (repeat for several)",
    )  # fmt: skip
    p.add_argument("--confidence", type=CONFIDENCE, default=0.95, help="of the half-widths")
    p.add_argument("--delta", type=cliargs.DELTA, help="default delta if the query has none")
    p.add_argument(
        "--max-groups",
        type=cliargs.MAX_GROUPS_CONTRIBUTED,
        help="default C_u if the query has none",
    )
    add_dataset_argument(p)
    p.set_defaults(handler=run_sql)


def run_sql(args) -> dict | str:
    from core.dpsql.service import prepare
    from core.dpsql.tables import catalog_of_dataset, catalog_of_files

    target = resolve(args, Tool.SQL.value, files=("table", "public"))
    tables, public, uid = _sql_tables(args, target)
    if target.dataset is not None:  # the declared schemas: public facts only
        catalog = catalog_of_dataset(target.dataset, owner=target.role is not Role.ANALYST)
    else:
        catalog = catalog_of_files(tables, public, uid=uid, row_is_unit=args.row_is_unit)
    sql = args.query if args.query else Path(args.query_file).read_text(encoding="utf-8")
    defaults = {"epsilon": 1.0, "delta": args.delta, "max_groups_contributed": args.max_groups}
    prepared = prepare(sql, catalog, target.noise, defaults)
    plan = plan_sql(prepared, [parse_target(t) for t in args.target], args.confidence)
    out = plan.to_json()
    out["budget_item"] = f"sql:{plan.epsilon:g}/{plan.as_written.delta:g}"
    if args.json:
        return out
    lines = [plan.describe(), plan.basis]
    for c in plan.as_written.checks:
        lines.append(
            f"  {c.target.aggregate}: ±{c.planned:.4g} planned (target ±{c.required:.4g})"
            + ("" if c.survival is None else f", a group of {c.target.min_units} units "
               f"released with probability {c.survival:.3f}")
        )  # fmt: skip
    lines.append(
        "C_u trade-off (optimised split): "
        + ", ".join(f"C_u={r.max_groups}: {r.epsilon:g}" for r in plan.cu_tradeoff if r.epsilon)
    )
    return "\n".join(lines)


def _sql_tables(args, target):
    from core.cli.sql_run import _pairs

    if target.dataset is not None:
        d = target.dataset
        if not d.uid and not d.row_is_unit:
            raise InputError(f"dataset '{d.name}' has no privacy unit: DP SQL needs one.")
        if d.row_is_unit:
            args.row_is_unit = True
        tables = [(t.name, t.path) for t in d.private_tables]
        public = [(t.name, t.path) for t in d.public_tables] + _pairs(args.public, "--public")
        return tables, public, d.uid
    if not args.table:
        raise InputError("dpx plan sql needs --table NAME=FILE with --uid COL, or --dataset NAME.")
    if not args.uid and not args.row_is_unit:
        raise InputError("name the privacy unit: --uid COL or --row-is-unit.")
    return _pairs(args.table, "--table"), _pairs(args.public, "--public"), args.uid


# -- PP ---------------------------------------------------------------------------------------
def _register_balance(plans, common) -> None:
    p = plans.add_parser(
        "balance",
        parents=[common],
        help="plan a PP release: feasibility and expected error, or the strictest rho2",
        description="Plan PP balancing from its public domain and a table size: feasibility "
        "and expected error at (rho1, rho2), or for --target-error the smallest rho2 meeting it.",
    )
    p.add_argument("input", nargs="?", type=cliargs.INPUT_FILE, help="CSV/Parquet table")
    p.add_argument("--sa", type=cliargs.NAME, help="the sensitive attribute column")
    p.add_argument("--categories", type=cliargs.CATEGORIES, help="the SA's public values A,B,C")
    p.add_argument(
        "--shares", type=cliargs.TEXT, default=None,
        help="declared public expected shares A=0.5,B=0.3,... (default: an even spread)",
    )  # fmt: skip
    p.add_argument("--rows", type=ROWS, default=None, help="the table size to plan for")
    p.add_argument("--rho1", type=cliargs.RHO, default=None, help="prior bound rho1")
    p.add_argument("--rho2", type=cliargs.RHO, default=None, help="posterior bound rho2")
    p.add_argument("--target-error", type=TARGET_ERROR, default=None, help="share units")
    p.add_argument("--plan-epsilon", type=cliargs.RELEASE_EPSILON, default=1.0, help="the plan's epsilon")
    p.add_argument("--confidence", type=CONFIDENCE, default=0.95, help="of the error")
    add_dataset_argument(p)
    p.set_defaults(handler=run_balance)


def run_balance(args) -> dict | str:
    from core.balancing.params import parse_rho

    target = resolve(args, Tool.PP.value, files=("input",))
    shape = pp_shape_from(args, target)
    rho1 = None if args.rho1 is None else parse_rho(args.rho1, "rho1")
    rho2 = None if args.rho2 is None else parse_rho(args.rho2, "rho2")
    if args.target_error is None:
        if rho1 is None or rho2 is None:
            raise InputError("give --rho1 and --rho2 (feasibility and error) or --target-error.")
        plan = plan_pp(shape, rho1, rho2, args.plan_epsilon, args.confidence)
        out = plan.to_json()
        out["budget_item"] = f"pp:{plan.cost.epsilon:g}"
        return out if args.json else plan.describe()
    if rho2 is not None:
        raise InputError("with --target-error the planner finds rho2: drop --rho2.")
    rows = (
        rho_frontier(shape, args.target_error, plan_epsilon=args.plan_epsilon,
                     confidence=args.confidence)
        if rho1 is None
        else (strictest_rho2(shape, rho1, args.target_error, args.plan_epsilon, args.confidence),)
    )  # fmt: skip
    found = [r for r in rows if r.rho2 is not None]
    out = {
        "tool": "pp",
        "target_error": args.target_error,
        "frontier": [
            {
                "rho1": str(r.rho1),
                "rho2": None if r.rho2 is None else str(r.rho2),
                "expected_error": None if r.plan is None else r.plan.error,
            }
            for r in rows
        ],  # fmt: skip
        "basis": shape.words() + "; no data read beyond the row count, nothing charged",
        "epsilon": args.plan_epsilon,
    }
    if found:
        best = found[0]
        out.update(rho1=str(best.rho1), rho2=str(best.rho2), describe=best.plan.describe())
        out["budget_item"] = f"pp:{best.plan.cost.epsilon:g}"
    else:
        out["describe"] = (
            f"No rho2 below 1 meets the target error {args.target_error:g} on {shape.words()}."
        )
    if args.json:
        return out
    lines = [out["describe"]]
    for r in out["frontier"]:
        lines.append(f"  rho1 {r['rho1']}: smallest rho2 {r['rho2'] or 'none'}")
    return "\n".join(lines)


def pp_shape_from(args, target) -> PPShape:  # noqa: N802 - builds the typed shape
    """The PP planner's public basis from the flags (and, for the owner, the row count)."""
    from core.balancing.columns import parse_columns

    cats = parse_columns(args.categories)
    shares = _shares(args.shares) if args.shares else None
    if shares and not cats:
        cats = list(shares)
    if not cats:
        raise InputError(
            "the planner needs the SA's public domain: --categories A,B,C (or --shares A=0.5,...)."
        )
    rows = args.rows if args.rows is not None else _row_count(args, target)
    if shares:
        if set(shares) != set(cats):
            raise InputError("--shares must name exactly the --categories.")
        return PPShape(tuple(cats), tuple(shares[c] for c in cats), rows, True)
    return PPShape.uniform(cats, rows)


def _shares(text: str) -> dict[str, float]:
    out = {}
    for item in text.split(","):
        name, sep, value = item.rpartition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            name = ""
        if not sep or not name.strip():
            raise InputError(f"--shares item '{item}' is not VALUE=SHARE (e.g. A=0.5).")
    return out


def _row_count(args, target) -> int:
    """The table size: the owner's table (public under PP's claim, owner only here), or the rows
    an earlier PP release of the dataset published (an analyst's only source besides --rows)."""
    if target.role is Role.ANALYST:
        from core.governance.artefacts import artefact_of

        records = [] if target.registry is None else target.registry.releases(target.dataset.name)
        published = [artefact_of(r) for r in records if r.tool == Tool.PP.value and r.artefact]
        if published and hasattr(published[-1], "rows_published"):
            return int(published[-1].rows_published)
        raise InputError(
            "analyst mode does not read the table: give the size to plan for with --rows N "
            "(no PP release of this dataset has published it yet)."
        )
    path = single_table(target.dataset, "plan balance") if target.dataset else args.input
    if not path:
        raise InputError("give --rows N, or the table (INPUT or --dataset NAME) to count.")
    frame = load_table(path)
    if args.sa and args.sa not in frame.columns:
        raise InputError(f"no column '{args.sa}' in the table. Fix: --sa COL.")
    return len(frame)
