"""`dpx balance`: PP balancing from a table or from per-value counts (the issue's CLI contract).

dpx balance (INPUT --sa COL | --freqs "x1=12,x2=8,...") --rho1 R --rho2 R
            [--merge none|utility] [--perturb --out FILE] [--seed S] [--json]
"""

from __future__ import annotations

import json
from pathlib import Path

from core import cliargs
from core.balancing.params import parse_freqs, parse_rho
from core.balancing.plan import plan_partition
from core.balancing.publish import publish, published_name
from core.balancing.records import encode_sa
from core.balancing.report import MERGE_LABEL, plan_json, plan_text
from core.data.loading import load_table
from core.data.validation import require_column
from core.errors import InputError
from core.files import atomic_outputs
from core.privacy import Noise
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
        "--record-order",
        choices=("original", "seeded"),
        default="original",
        help="which records of a value go to which group: original row order or a random permutation",
    )
    p.add_argument(
        "--drop-columns",
        type=cliargs.TEXT,
        default="",
        help="comma-separated direct identifiers to remove",
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
    p.set_defaults(handler=govern_balance(run))


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


def _spark_publish(args, frame, plan, noise, drop, out: Path) -> dict:
    """--perturb on Spark: records assigned and perturbed on the executors with draws derived
    from a secret key drawn here from `noise` (core.balancing.spark_publish); one CSV."""
    from core.balancing.spark_publish import publish_spark
    from core.sparkutil import spark_failure

    try:
        return publish_spark(
            frame.sparkSession, frame, args.sa, plan, noise, out,
            accept_fallback=args.accept_fallback, missing=args.missing, drop_columns=drop,
            record_order=args.record_order,
        )  # fmt: skip
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - a Spark failure: one line, no partial file
        out.unlink(missing_ok=True)
        raise spark_failure(f"publish the perturbed table to {out}", err) from None


def run(args) -> dict | str:
    if (args.input is None) == (args.freqs is None):
        raise InputError('give either a table INPUT with --sa COL, or --freqs "x1=12,x2=8,...".')
    rho1 = parse_rho(args.rho1, "rho1")
    rho2 = parse_rho(args.rho2, "rho2")
    df = spark_frame = None
    if args.freqs is not None:
        if args.perturb:
            raise InputError(
                "--perturb needs a table of records: give INPUT --sa COL, not --freqs."
            )
        counts, given_order = parse_freqs(args.freqs)
        plan = plan_partition(
            counts,
            rho1,
            rho2,
            canonical=given_order,
            tie_policy=args.tie_policy,
            merge_policy=args.merge,
        )
    else:
        if not args.sa:
            raise InputError("name the sensitive attribute column with --sa COL.")
        if getattr(args, "engine", "pandas") == "spark":
            counts, spark_frame = _spark_counts(args)
        else:
            df = load_table(args.input)
            require_column(df, args.sa, "sensitive attribute column")
            cliargs.refuse_nested_columns(df, [args.sa])
            counts = encode_sa(df[args.sa], missing=args.missing).counts()
        plan = plan_partition(
            counts, rho1, rho2, tie_policy=args.tie_policy, merge_policy=args.merge
        )
    result = plan_json(plan)
    if args.perturb:
        if not args.out:
            raise InputError("--perturb needs --out FILE for the published CSV.")
        noise = Noise.from_seed(args.seed)
        drop = [c.strip() for c in args.drop_columns.split(",") if c.strip()]
        out = published_name(args.out, noise)  # a seeded publication says so in its name
        meta_path = metadata_path(out)
        pub = None
        if spark_frame is None:
            for col in drop:
                require_column(df, col, "column to drop")
            pub = publish(
                df,
                args.sa,
                plan,
                noise,
                accept_fallback=args.accept_fallback,
                missing=args.missing,
                drop_columns=drop,
                record_order=args.record_order,
            )
        # the CSV and its metadata appear together or not at all (core.files)
        with atomic_outputs(out, meta_path, make_parents=True) as (table_file, meta_file):
            if pub is None:
                metadata = _spark_publish(args, spark_frame, plan, noise, drop, table_file.temp)
                rows = sum(plan.counts.values())
            else:
                with table_file.open(newline="") as fh:  # streamed in chunks by pandas
                    pub.table.to_csv(fh, index=False)
                metadata, rows = pub.metadata, len(pub.table)
            meta_file.write_text(json.dumps(metadata, indent=2))
        result["published"] = {
            "out": str(out),
            "metadata": str(meta_path),
            "rows": rows,
            "single_table_fallback": metadata["single_table_fallback"],
            "noise": noise.describe(),
        }
    if args.json:
        return result
    text = plan_text(plan)
    if args.perturb:
        pubd = result["published"]
        text += f"\n\npublished {pubd['rows']} rows to {pubd['out']} (metadata {pubd['metadata']})"
        if args.seed is not None:
            text += f"\nmode: {Noise.from_seed(args.seed).label}"
    return text
