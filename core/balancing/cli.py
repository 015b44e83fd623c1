"""`dpx balance`: PP balancing from a table or from per-value counts (the issue's CLI contract).

dpx balance (INPUT --sa COL | --freqs "x1=12,x2=8,...") --rho1 R --rho2 R
            [--merge none|utility] [--perturb --out FILE [--columns A,B] [--plan-epsilon E]
             [--categories X,Y,...]] [--seed S] [--json]

Without --perturb the command prints the EXACT plan (thesis Phase 1 on the exact counts): the
owner's teaching and evaluation view, not a release. With --perturb it publishes a PP release:
the plan is made from DP-noised counts (`core.balancing.release`, ε = --plan-epsilon charged)
and only the SA plus the columns given with --columns are published.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core import cliargs
from core.balancing.columns import check_requested, parse_columns, published_columns
from core.balancing.names import published_name
from core.balancing.params import parse_freqs, parse_rho
from core.balancing.plan import plan_partition
from core.balancing.publish import publish
from core.balancing.records import encode_sa
from core.balancing.release import DEFAULT_PLAN_EPSILON, ReleaseSettings
from core.balancing.report import MERGE_LABEL, plan_json, plan_text
from core.data.loading import load_table
from core.data.validation import require_column
from core.errors import InputError
from core.files import atomic_outputs
from core.privacy import Accountant, Noise
from core.registry.cli_hooks import add_dataset_argument, govern_balance


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
        type=cliargs.OUTPUT_FILE_IN_NEW_DIR,
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
        help="what to do with missing SA values (default: stop and ask)",
    )
    p.add_argument(
        "--columns",
        type=cliargs.TEXT,
        default="",
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
        type=cliargs.TEXT,
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
        help="where the counting pass runs: in memory, or on Apache Spark for tables larger "
        "than memory (pip install -e '.[spark]', Java 17); with --perturb, records are also "
        "assigned and perturbed on Spark",
    )
    p.add_argument(
        "--spark-master", type=cliargs.TEXT, metavar="URL", help="Spark master (default local[2])"
    )
    add_dataset_argument(p)  # registry (issue 12)
    p.set_defaults(handler=govern_balance(run, charged=charged_mechanisms))


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


def charged_mechanisms(args) -> list:
    """What `dpx balance` charges before reading data: with --perturb, the plan's discrete
    Laplace (ε = --plan-epsilon) and, without --categories, the value threshold's δ; the exact
    plan without --perturb charges nothing."""
    if not args.perturb:
        return []
    settings = release_settings(args, parse_rho(args.rho1, "rho1"), parse_rho(args.rho2, "rho2"))
    publishable = getattr(args, "publishable", None)
    if publishable is not None:  # a registered dataset: refused before anything is charged
        check_requested(args.sa, publishable, parse_columns(args.columns))
    return settings.charged_mechanisms


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


def _publish(args, rho1, rho2) -> dict:
    """`--perturb`: a PP release (noisy plan, declared columns only); the JSON of the release."""
    if not args.out:
        raise InputError("--perturb needs --out FILE for the published CSV.")
    settings = release_settings(args, rho1, rho2)
    noise = Noise.from_seed(args.seed)
    accountant = Accountant(noise, budget=settings.cost, rho=settings.claim)
    out = published_name(args.out, noise)  # a seeded publication says so in its name
    meta_path = metadata_path(out)
    pub = frame = None
    if getattr(args, "engine", "pandas") == "spark":
        counts, frame = _spark_counts(args)
        columns = _columns(args, frame.columns)
    else:
        df = load_table(args.input)
        require_column(df, args.sa, "sensitive attribute column")
        cliargs.refuse_nested_columns(df, [args.sa])
        columns = _columns(args, df.columns)
        pub = publish(df, args.sa, columns, settings, accountant)
    # the CSV and its metadata appear together or not at all (core.files)
    with atomic_outputs(out, meta_path, make_parents=True) as (table_file, meta_file):
        if pub is None:
            metadata, release_plan = _spark_publish(
                args, frame, counts, columns, settings, accountant, table_file.temp
            )
        else:
            with table_file.open(newline="") as fh:
                fh.write(pub.csv())
            metadata, release_plan = pub.metadata, pub.release
        meta_file.write_text(json.dumps(metadata, indent=2))
    result = plan_json(release_plan.plan)
    result["plan"] = RELEASE_PLAN_LABEL
    result["privacy"] = metadata["privacy"]
    result["published"] = {
        "out": str(out),
        "metadata": str(meta_path),
        "columns": metadata["published_columns"],
        "single_table_fallback": metadata["single_table_fallback"],
        "noise": noise.describe(),
    }
    return result


RELEASE_PLAN_LABEL = (
    "release plan: Phase 1 on DP-noised counts (epsilon-DP); the published sub-tables"
)
EXACT_PLAN_LABEL = (
    "exact plan: Phase 1 on the exact counts - the owner's teaching/evaluation view, not a release"
)


def run(args) -> dict | str:
    if (args.input is None) == (args.freqs is None):
        raise InputError('give either a table INPUT with --sa COL, or --freqs "x1=12,x2=8,...".')
    if getattr(args, "drop_columns", None) is not None:
        raise InputError(
            "--drop-columns was replaced by --columns: name the columns to publish next to the "
            "SA (by default only the SA is published)."
        )
    rho1 = parse_rho(args.rho1, "rho1")
    rho2 = parse_rho(args.rho2, "rho2")
    if args.perturb:
        if args.freqs is not None:
            raise InputError(
                "--perturb needs a table of records: give INPUT --sa COL, not --freqs."
            )
        if not args.sa:
            raise InputError("name the sensitive attribute column with --sa COL.")
        result = _publish(args, rho1, rho2)
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
        return "\n".join(lines)
    if args.freqs is not None:
        counts, given_order = parse_freqs(args.freqs)
    else:
        if not args.sa:
            raise InputError("name the sensitive attribute column with --sa COL.")
        given_order = None
        if getattr(args, "engine", "pandas") == "spark":
            counts, _ = _spark_counts(args)
        else:
            df = load_table(args.input)
            require_column(df, args.sa, "sensitive attribute column")
            cliargs.refuse_nested_columns(df, [args.sa])
            counts = encode_sa(df[args.sa], missing=args.missing).counts()
    plan = plan_partition(
        counts, rho1, rho2, canonical=given_order, tie_policy=args.tie_policy,
        merge_policy=args.merge,
    )  # fmt: skip
    result = plan_json(plan)
    result["plan"] = EXACT_PLAN_LABEL
    if args.json:
        return result
    return f"{EXACT_PLAN_LABEL}\n\n{plan_text(plan)}"
