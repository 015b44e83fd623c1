"""`dpx balance`: PP balancing from a table or from per-value counts (the issue's CLI contract).

dpx balance (INPUT --sa COL | --freqs "x1=12,x2=8,...") --rho1 R --rho2 R
            [--merge none|utility] [--perturb --out FILE [--columns A,B] [--plan-epsilon E]
             [--categories X,Y,...]] [--seed S] [--json]

Without --perturb the command prints the EXACT plan (thesis Phase 1 on the exact counts): the
owner's teaching and evaluation view, not a release (refused in analyst mode). With --perturb
it publishes a PP release through the governed flow: argv becomes a typed `PPParams` once
(`pp_params`), `core.balancing.service.prepare` makes every check that needs no private data,
`core.governance.pp.pp_request` builds the request (the page builds the same one), and
`core.governance.govern` charges it: the plan's ε
(--plan-epsilon) is charged before the table is read, the plan is made from DP-noised counts
(`core.balancing.release`), only the SA plus the published columns leave — on a registered
dataset, only columns its owner declared (`dpx dataset policy NAME --pp-columns ...`) — and
the registry records the mechanisms that drew and the publication's typed record.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core import cliargs
from core.balancing.columns import parse_columns
from core.balancing.params import parse_freqs, parse_rho
from core.balancing.plan import plan_partition
from core.balancing.record import pp_artefact
from core.balancing.records import encode_sa
from core.balancing.release import DEFAULT_PLAN_EPSILON
from core.balancing.report import MERGE_LABEL, plan_json, plan_text
from core.balancing.service import (
    CategoriesFrom,
    PPParams,
    PPPrepared,
    PPSource,
    run_to_file,
    spark_counts,
)
from core.cli.common import (
    add_dataset_argument,
    params_of,
    registry_info,
    registry_line,
    release_view,
    resolve,
    single_table,
    view_text,
)
from core.data.loading import load_table
from core.data.schema import require_columns
from core.data.validation import require_column
from core.errors import InputError
from core.files import work_directory
from core.governance import Role, current_role, govern, require_owner
from core.governance.origin import Origin
from core.governance.pp import pp_request, prepared_or_refused
from core.privacy import Noise
from core.registry import Tool


def register(sub, common) -> None:
    p = sub.add_parser(
        "balance",
        parents=[common],
        help="PP balancing: partition a table into sub-tables and (optionally) perturb it",
        description=(
            "Phase 1 of the PP algorithm (balancing), the T'' distribution and per-sub-table "
            "retention probabilities; with --perturb, publish a perturbed table. rho values "
            "accept decimals (0.3) or fractions (1/3)."
        ),
    )
    p.add_argument(
        "input", nargs="?", type=cliargs.INPUT_FILE, help="CSV or Parquet table (with --sa)"
    )
    p.add_argument("--sa", type=cliargs.NAME, help="the sensitive attribute column of INPUT")
    p.add_argument(
        "--freqs",
        type=cliargs.FREQS,
        help='per-value counts instead of a table, e.g. "x1=12,x2=8"',
    )
    p.add_argument(
        "--rho1", type=cliargs.RHO, required=True, help="prior bound rho1 (e.g. 1/3 or 0.3)"
    )
    p.add_argument(
        "--rho2", type=cliargs.RHO, required=True, help="posterior bound rho2 > rho1 (e.g. 2/3)"
    )
    p.add_argument(
        "--merge",
        choices=("none", "utility"),
        default="none",
        help=f"Phase 2 merge policy (default none; utility is {MERGE_LABEL})",
    )
    p.add_argument(
        "--tie-policy", choices=("stable", "value_order"), default="stable", help="re-sort policy"
    )
    p.add_argument("--perturb", action="store_true", help="perturb and publish (needs --out)")
    p.add_argument(
        "--out",
        type=cliargs.PUBLISHED_TABLE,
        help="published CSV path; metadata is written next to it. With --seed the name gets "
        "a '.SEEDED-demo-not-private' marker before the suffix",
    )
    p.add_argument(
        "--accept-fallback",
        action="store_true",
        help="if the partition is refused, publish the single-table fallback instead",
    )
    p.add_argument(
        "--missing",
        choices=("error", "drop", "category"),
        default="error",
        help="what to do with missing SA values (default: stop and ask). With --perturb an "
        "analyst always chooses drop or category, before anything is charged",
    )
    p.add_argument(
        "--columns",
        type=cliargs.COLUMNS,
        default=None,
        help="comma-separated columns published (unchanged) next to the perturbed SA; default: "
        "the SA only. The privacy-unit column is never published",
    )
    p.add_argument(
        "--plan-epsilon",
        type=cliargs.RELEASE_EPSILON,
        default=DEFAULT_PLAN_EPSILON,
        help="epsilon charged for the partition plan, made from discrete-Laplace-noised value "
        f"counts (default {DEFAULT_PLAN_EPSILON:g}; unit: one record's SA value)",
    )
    p.add_argument(
        "--categories",
        type=cliargs.CATEGORIES,
        help="comma-separated list of the SA's possible values, declared public (delta 0); "
        "default: the categories the dataset's schema declares for the SA (said in the "
        "output), else read from the data and listed only above a noisy threshold "
        "(delta <= 1e-6)",
    )
    p.add_argument(  # replaced by --columns: refused with a pointer
        "--drop-columns", type=cliargs.TEXT, help=argparse.SUPPRESS
    )
    p.add_argument(
        "--engine",
        choices=("pandas", "spark"),
        default="pandas",
        help="where the counting pass runs: on this machine (a Parquet/CSV file is read by "
        "DuckDB where it lies and the publication streamed; a dataset with a person column is "
        "loaded into memory), or on Apache Spark (pip install -e '.[spark]', Java 17); with "
        "--perturb, records are also assigned and perturbed on Spark",
    )
    p.add_argument(
        "--spark-master", type=cliargs.TEXT, metavar="URL", help="Spark master (default local[2])"
    )
    add_dataset_argument(p)
    p.set_defaults(handler=run)


def pp_params(args) -> PPParams:
    """The typed parameters of `dpx balance --perturb`, built once from argv (the argparse
    namespace never leaves core/cli/)."""
    categories = parse_columns(getattr(args, "categories", None)) or None
    return PPParams(
        sa=args.sa,
        rho1=parse_rho(args.rho1, "rho1"),
        rho2=parse_rho(args.rho2, "rho2"),
        categories=None if categories is None else tuple(categories),
        missing=args.missing,
        columns=tuple(parse_columns(args.columns)),
        plan_epsilon=args.plan_epsilon,
        tie_policy=args.tie_policy,
        merge_policy=args.merge,
        accept_fallback=args.accept_fallback,
        perturb=True,
        engine=getattr(args, "engine", "pandas"),
    )


def _publish(prepared: PPPrepared, out: Path, spark_master, accountant) -> tuple[dict, int]:
    """The publication itself (after the charge): `core.balancing.service.run_to_file`.
    Returns (the command's JSON, rows published)."""
    filed = run_to_file(prepared, accountant, out, spark_master)
    result = plan_json(filed.release.plan)
    result["plan"] = RELEASE_PLAN_LABEL
    result["privacy"] = filed.metadata["privacy"]
    result["metadata_object"] = filed.metadata
    result["published"] = {
        "out": str(filed.out),
        "metadata": str(filed.metadata_path),
        "columns": filed.metadata["published_columns"],
        "single_table_fallback": filed.metadata["single_table_fallback"],
        "categories_from": prepared.categories_from,
        "noise": accountant.noise.describe(),
    }
    return result, filed.rows


def run_publication(args) -> dict | str:
    """`dpx balance --perturb`: one governed PP release (`core.governance.pp.pp_request`).

    Privacy claim: (ρ1, ρ2)-privacy per record (one `PPRandomization` per sub-table) and
    (ε, δ) = `prepared.cost` for the partition plan (discrete Laplace on the value counts,
    unit: one record's SA value; δ = 0 with declared categories), charged to the dataset
    before the table is read. Every check that needs no private data comes first (`prepare`;
    the missing-value rule in the governed flow, before the charge)."""
    if args.freqs is not None:
        raise InputError("--perturb needs a table of records: give INPUT --sa COL, not --freqs.")
    target = resolve(args, Tool.PP.value, files=("input",))
    path = single_table(target.dataset, "balance") if target.dataset is not None else args.input
    if not path:
        raise InputError("dpx balance needs INPUT (a CSV/Parquet file) or --dataset NAME.")
    if not args.sa:
        raise InputError("name the sensitive attribute column with --sa COL.")
    if not args.out:
        raise InputError("--perturb needs --out FILE for the published CSV.")
    params = pp_params(args)
    source = PPSource.of_file(path, target.dataset)
    door = Origin.cli(params_of(args))
    prepared = prepared_or_refused(target.registry, params, source, door)
    request = pp_request(
        prepared, role=target.role, dataset=target.dataset, noise=target.noise, door=door
    )
    out, master = Path(args.out), getattr(args, "spark_master", None)
    governed = govern(
        target.registry,
        request,
        lambda accountant: _publish(prepared, out, master, accountant),
        lambda r: pp_artefact(r[0]["metadata_object"], r[1]).to_json(),
    )
    result, _ = governed.result
    result.pop("metadata_object")
    categories_line = _categories_line(prepared)
    if target.role is Role.ANALYST:
        view = release_view(target.registry, governed.record)
        view["out"] = result["published"]["out"]
        view["metadata"] = result["published"]["metadata"]
        view["categories_from"] = prepared.categories_from
        if args.json:
            return view
        headline = f"PP publication written to {view['out']} (metadata {view['metadata']})"
        return view_text(view, headline) + "\n" + categories_line
    if governed.record is not None:
        result["registry"] = registry_info(target.registry, governed.record)
    if args.json:
        return result
    pubd = result["published"]
    lines = [
        f"published {pubd['out']} (metadata {pubd['metadata']}); columns "
        f"{', '.join(pubd['columns'])}",
        categories_line,
        *result["privacy"]["statement"],
    ]
    if args.seed is not None:
        lines.append(f"mode: {Noise.from_seed(args.seed).label}")
    if "registry" in result:
        lines.append(registry_line(result["registry"]))
    return "\n".join(lines)


def _categories_line(prepared: PPPrepared) -> str:
    """Where the SA's categories came from, in one line (a schema default is said so)."""
    cats = prepared.settings.categories
    if cats is None:
        return f"SA categories: {CategoriesFrom.DATA} (delta {prepared.cost.delta:.2g})."
    return f"SA categories: {', '.join(cats)} ({prepared.categories_from}; delta 0)."


def _exact_counts(args) -> dict[str, int]:
    """The SA's exact value counts (the owner's view): counted by DuckDB where the file lies,
    or from the loaded table when DuckDB cannot read it."""

    from core.balancing.file_scan import file_value_counts
    from core.spatial.scan import ScanUnavailable

    try:
        with work_directory("dpx-pp-") as work:
            return file_value_counts(args.input, args.sa, args.missing, work).counts()
    except ScanUnavailable:
        df = load_table(args.input)
        require_column(df, args.sa, "sensitive attribute column")
        cliargs.refuse_nested_columns(df, [args.sa])
        return encode_sa(df[args.sa], missing=args.missing).counts()


RELEASE_PLAN_LABEL = (
    "release plan: Phase 1 on DP-noised counts (epsilon-DP); the published sub-tables"
)
EXACT_PLAN_LABEL = (
    "exact plan: Phase 1 on the exact counts - the owner's teaching/evaluation view, not a release"
)


def run(args) -> dict | str:
    if getattr(args, "drop_columns", None) is not None:
        raise InputError(
            "--drop-columns was replaced by --columns: name the columns to publish next to the "
            "SA (by default only the SA is published)."
        )
    if args.perturb:
        return run_publication(args)
    require_owner(
        current_role(), "the exact plan (the owner's teaching view; publish with --perturb)"
    )
    if args.dataset is not None:  # the owner's view of a registered table: nothing charged
        if args.input or args.freqs:
            raise InputError("give INPUT/--freqs or --dataset NAME, not both.")
        target = resolve(args, Tool.PP.value, files=("input", "freqs"))
        args.input = single_table(target.dataset, "balance")
        require_columns(args.input, {"sensitive attribute": args.sa})
    if (args.input is None) == (args.freqs is None):
        raise InputError('give either a table INPUT with --sa COL, or --freqs "x1=12,x2=8,...".')
    rho1 = parse_rho(args.rho1, "rho1")
    rho2 = parse_rho(args.rho2, "rho2")
    if args.freqs is not None:
        counts, given_order = parse_freqs(args.freqs)
    else:
        if not args.sa:
            raise InputError("name the sensitive attribute column with --sa COL.")
        given_order = None
        if getattr(args, "engine", "pandas") == "spark":
            counts, _ = spark_counts(args.input, args.sa, args.missing, args.spark_master)
        else:
            counts = _exact_counts(args)
    plan = plan_partition(
        counts, rho1, rho2, canonical=given_order, tie_policy=args.tie_policy,
        merge_policy=args.merge,
    )  # fmt: skip
    result = plan_json(plan)
    result["plan"] = EXACT_PLAN_LABEL
    if args.json:
        return result
    return f"{EXACT_PLAN_LABEL}\n\n{plan_text(plan)}"
