"""`dpx balance`: PP balancing from a table or from per-value counts (the issue's CLI contract).

dpx balance (INPUT --sa COL | --freqs "x1=12,x2=8,...") --rho1 R --rho2 R
            [--merge none|utility] [--perturb --out FILE [--columns A,B] [--plan-epsilon E]
             [--categories X,Y,...]] [--seed S] [--json]

Without --perturb the command prints the EXACT plan (thesis Phase 1 on the exact counts): the
owner's teaching and evaluation view, not a release (refused in analyst mode). With --perturb
it publishes a PP release through the governed flow (`core.governance.govern`): the plan's ε
(--plan-epsilon) is charged before the table is read, the plan is made from DP-noised counts
(`core.balancing.release`), only the SA plus the published columns leave — on a registered
dataset, only columns its owner declared (`dpx dataset policy NAME --pp-columns ...`) — and
the registry records the mechanisms that drew and the publication's typed record.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core import cliargs
from core.balancing.columns import check_requested, parse_columns, published_columns
from core.balancing.names import published_name
from core.balancing.params import parse_freqs, parse_rho
from core.balancing.persons import unit_words
from core.balancing.plan import plan_partition
from core.balancing.precharge import count_missing_in_file, missing_policy
from core.balancing.publish import publish
from core.balancing.record import pp_artefact
from core.balancing.records import encode_sa
from core.balancing.release import DEFAULT_PLAN_EPSILON, ReleaseSettings
from core.balancing.report import MERGE_LABEL, plan_json, plan_text
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
from core.data.schema import columns_of, require_columns
from core.data.validation import require_column
from core.errors import InputError
from core.files import atomic_outputs, work_directory
from core.governance import Request, Role, current_role, govern, require_owner
from core.privacy import Noise
from core.registry import Claim, Tool


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
        type=cliargs.EPSILON,
        default=DEFAULT_PLAN_EPSILON,
        help="epsilon charged for the partition plan, made from discrete-Laplace-noised value "
        f"counts (default {DEFAULT_PLAN_EPSILON:g}; unit: one record's SA value)",
    )
    p.add_argument(
        "--categories",
        type=cliargs.CATEGORIES,
        help="comma-separated list of the SA's possible values, declared public (delta 0); "
        "default: read from the data and listed only above a noisy threshold (delta <= 1e-6)",
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


def metadata_path(out: Path) -> Path:
    return out.with_name(out.stem + ".metadata.json")


def _spark_counts(args):
    """The SA value counts from a Spark pass (issue 11), and the Spark table they came from;
    only counts reach the driver."""
    if args.perturb and not args.out:
        raise InputError("--perturb needs --out FILE for the published CSV.")
    from core.balancing.spark_pass import count_values, read_table
    from core.sparkutil import spark_failure, spark_session

    session = spark_session(args.spark_master)
    try:
        frame = read_table(session, args.input)
        return count_values(frame, args.sa, missing=args.missing), frame
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - a Spark read/analysis failure: one line
        raise spark_failure(f"count the values of {args.input}", err) from None


def _spark_publish(args, frame, counts, columns, settings, accountant, out: Path):
    """--perturb on Spark: records assigned and perturbed on the executors with draws derived
    from a secret key drawn here under the release's mechanisms (core.balancing.spark_publish)."""
    from core.balancing.spark_publish import publish_spark
    from core.sparkutil import spark_failure

    try:
        return publish_spark(
            frame.sparkSession, frame, args.sa, counts, columns, settings, accountant, out
        )
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - a Spark failure: one line, no partial file
        out.unlink(missing_ok=True)
        raise spark_failure(f"publish the perturbed table to {out}", err) from None


def release_settings(args, rho1, rho2) -> ReleaseSettings:
    """The public parameters of `dpx balance --perturb` (what the registry charges: `.cost`)."""
    categories = parse_columns(getattr(args, "categories", None)) or None
    return ReleaseSettings(
        rho1,
        rho2,
        plan_epsilon=args.plan_epsilon,
        tie_policy=args.tie_policy,
        merge_policy=args.merge,
        missing=args.missing,
        accept_fallback=args.accept_fallback,
        categories=None if categories is None else tuple(categories),
    )


def _columns(args, table_columns) -> list[str]:
    """The published columns: the SA plus --columns. For a registered dataset --columns must be
    among the columns its owner declared publishable (`Dataset.publishable`, set on `args` by
    the governance); the unit column never."""
    asked = parse_columns(args.columns)
    unit = getattr(args, "unit_column", None)
    publishable = getattr(args, "publishable", None)
    if publishable is None:  # files given directly: the owner declares with --columns
        return published_columns(table_columns, args.sa, unit, asked)
    return published_columns(table_columns, args.sa, unit, publishable, [args.sa, *asked])


def _publish(args, settings: ReleaseSettings, accountant) -> tuple[dict, int]:
    """The publication itself (after the charge): the noisy plan, the published rows, the CSV
    and its metadata written together. Returns (the command's JSON, rows published)."""
    noise = accountant.noise
    out = published_name(args.out, noise)  # a seeded publication says so in its name
    meta_path = metadata_path(out)
    pub = frame = None
    if getattr(args, "engine", "pandas") == "spark":
        counts, frame = _spark_counts(args)
        columns = _columns(args, frame.columns)
    elif getattr(args, "unit_column", None) is None:
        streamed = _publish_streamed(args, settings, accountant, out, meta_path)
        if streamed is not None:
            return _publication_result(args, noise, out, meta_path, *streamed)
    if frame is None:
        df = load_table(args.input)
        require_column(df, args.sa, "sensitive attribute column")
        cliargs.refuse_nested_columns(df, [args.sa])
        columns = _columns(args, df.columns)
        unit = getattr(args, "unit_column", None)
        pub = publish(df, args.sa, columns, settings, accountant, unit=unit)
    # the CSV and its metadata appear together or not at all (core.files)
    with atomic_outputs(out, meta_path, make_parents=True) as (table_file, meta_file):
        if pub is None:
            metadata, release_plan = _spark_publish(
                args, frame, counts, columns, settings, accountant, table_file.temp
            )
            rows = int(metadata.get("rows_published", 0))
        else:
            pub.write_csv(table_file.temp)  # in bulk: the bytes pub.csv() holds
            metadata, release_plan = pub.metadata, pub.release
            rows = len(pub.table)
        meta_file.write_text(json.dumps(metadata, indent=2))
    return _publication_result(args, noise, out, meta_path, metadata, release_plan, rows)


def _publish_streamed(args, settings, accountant, out: Path, meta_path: Path):
    """The publication of a Parquet/CSV file read where it lies (`publish_file`: value counts
    in DuckDB, rows randomized in chunks, shuffled and written by DuckDB): (metadata, plan,
    rows), or None when DuckDB cannot read the file (nothing drawn yet: the caller loads it).

    Datasets with a person column never come here: one record per person needs each person's
    records together (`core.balancing.persons`), which the in-memory path does."""
    from core.balancing.stream_publish import publish_file
    from core.spatial.scan import ScanUnavailable

    columns = _columns(args, columns_of(args.input))  # the header/footer: public
    try:
        with atomic_outputs(out, meta_path, make_parents=True) as (table_file, meta_file):
            filed = publish_file(
                args.input, args.sa, columns, settings, accountant, table_file.temp
            )
            meta_file.write_text(json.dumps(filed.metadata, indent=2))
    except ScanUnavailable:
        return None
    return filed.metadata, filed.release, filed.rows


def _publication_result(args, noise, out, meta_path, metadata, release_plan, rows):
    """The command's JSON for a written publication, and its rows."""
    result = plan_json(release_plan.plan)
    result["plan"] = RELEASE_PLAN_LABEL
    result["privacy"] = metadata["privacy"]
    result["metadata_object"] = metadata
    result["published"] = {
        "out": str(out),
        "metadata": str(meta_path),
        "columns": metadata["published_columns"],
        "single_table_fallback": metadata["single_table_fallback"],
        "noise": noise.describe(),
    }
    return result, rows


def run_publication(args) -> dict | str:
    """`dpx balance --perturb`: one governed PP release.

    Privacy claim: (ρ1, ρ2)-privacy per record (one `PPRandomization` per sub-table) and
    (ε, δ) = the plan's cost for the partition (discrete Laplace on the value counts, unit: one
    record's SA value), charged to the dataset before the table is read (the data owner's
    missing-value check counts the SA's missing values first; an analyst's reads nothing)."""
    if args.freqs is not None:
        raise InputError("--perturb needs a table of records: give INPUT --sa COL, not --freqs.")
    target = resolve(args, Tool.PP.value, files=("input",))
    if target.dataset is not None:
        args.input = single_table(target.dataset, "balance")
        args.unit_column = target.dataset.uid  # never published (core.balancing.columns)
        args.publishable = target.dataset.publishable  # the owner's declared columns
        check_requested(args.sa, args.publishable, parse_columns(args.columns))
    elif not args.input:
        raise InputError("dpx balance needs INPUT (a CSV/Parquet file) or --dataset NAME.")
    if not args.sa:
        raise InputError("name the sensitive attribute column with --sa COL.")
    if not args.out:
        raise InputError("--perturb needs --out FILE for the published CSV.")
    settings = release_settings(args, parse_rho(args.rho1, "rho1"), parse_rho(args.rho2, "rho2"))
    unit = getattr(args, "unit_column", None)
    if unit is not None and getattr(args, "engine", "pandas") == "spark":
        raise InputError(
            f"dataset '{args.dataset}' has a person column ({unit}): PP keeps one record per "
            "person, which the Spark engine does not do yet. Fix: drop --engine spark."
        )
    request = Request(
        tool=Tool.PP.value,
        role=target.role,
        dataset=target.dataset,
        params=params_of(args),
        cost=settings.cost,
        claim=Claim(unit_words(unit), unit, str(settings.rho1), str(settings.rho2)),
        noise=target.noise,
        rho=settings.claim,
        extra_checks=_checks_before_the_charge(args, target.role),
    )
    governed = govern(
        target.registry,
        request,
        lambda accountant: _publish(args, settings, accountant),
        lambda r: pp_artefact(r[0]["metadata_object"], r[1]).to_json(),
    )
    result, _ = governed.result
    result.pop("metadata_object")
    if target.role is Role.ANALYST:
        view = release_view(target.registry, governed.record)
        view["out"] = result["published"]["out"]
        view["metadata"] = result["published"]["metadata"]
        if args.json:
            return view
        headline = f"PP publication written to {view['out']} (metadata {view['metadata']})"
        return view_text(view, headline)
    if governed.record is not None:
        result["registry"] = registry_info(target.registry, governed.record)
    if args.json:
        return result
    pubd = result["published"]
    lines = [
        f"published {pubd['out']} (metadata {pubd['metadata']}); columns "
        f"{', '.join(pubd['columns'])}",
        *result["privacy"]["statement"],
    ]
    if args.seed is not None:
        lines.append(f"mode: {Noise.from_seed(args.seed).label}")
    if "registry" in result:
        lines.append(registry_line(result["registry"]))
    return "\n".join(lines)


def _checks_before_the_charge(args, role: Role) -> tuple:
    """Every check of `dpx balance --perturb` that needs no private data, run by the governed
    flow before the charge (issue 28): the SA (and a dataset's person column) are columns of
    the file, the published columns are columns the owner may publish (the header and the
    dataset's declaration are public), and the missing-value policy is declared
    (`core.balancing.precharge`, the page's rule too: an analyst always declares it; the
    owner, when the SA has missing values). A refusal here is recorded and charges nothing."""
    analyst = role is Role.ANALYST

    def missing() -> None:
        missing_policy(
            args.missing,
            analyst=analyst,
            sa=args.sa,
            count_missing=lambda: count_missing_in_file(args.input, args.sa),
        )

    named = {"sensitive attribute": args.sa, "person": getattr(args, "unit_column", None)}
    return (
        lambda: require_columns(args.input, named),
        lambda: _columns(args, columns_of(args.input)),
        missing,
    )


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
            counts, _ = _spark_counts(args)
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
