"""The PP balancing data pass on Apache Spark: counting the sensitive attribute's values.

For tables larger than memory, Spark reduces the file to one count per SA value; only those
counts reach the driver, and the partition plan (`core.balancing.plan`) runs on them as today.
Values are read as text (labels are the file's text; empty fields are missing) and listed in
order of first appearance, like `pd.factorize` in `core.balancing.records.encode_sa`. The
missing-value policy is the in-memory path's (error / drop / category).

Not released and not randomised: the counts are the exact private input of the planner.

Record assignment and perturbation on Spark (`dpx balance --engine spark --perturb`):
`core.balancing.spark_publish`, with draws derived from a secret key drawn from `Noise`.
"""

from __future__ import annotations

from pathlib import Path

from core.balancing.records import (
    MAX_SA_VALUES,
    MISSING_LABEL,
    MISSING_POLICIES,
    MissingPolicy,
    check_distinct,
    nested_column_error,
)
from core.errors import InputError


def read_table(spark, path: str | Path):
    """A Spark DataFrame of the CSV (all columns as text) or Parquet file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"file not found: {path}. Check the path.")
    if path.suffix.lower() in (".parquet", ".pq"):
        return spark.read.parquet(str(path))
    return spark.read.csv(str(path), header=True, inferSchema=False)


def count_values(frame, sa: str, missing: MissingPolicy = "error") -> dict[str, int]:
    """value label -> number of records, in order of first appearance (missing per policy)."""
    from pyspark.sql import functions as fn

    if sa not in frame.columns:
        raise InputError(
            f"sensitive attribute column '{sa}' not found. Columns: {', '.join(frame.columns)}."
        )
    from pyspark.sql.types import ArrayType, MapType, StructType

    if missing not in MISSING_POLICIES:
        raise InputError(f"unknown missing-value policy {missing!r}: use drop or category.")
    if isinstance(frame.schema[sa].dataType, (ArrayType, MapType, StructType)):
        raise nested_column_error(sa)
    value = fn.col(sa).cast("string")
    rows = (
        frame.select(value.alias("v"), fn.monotonically_increasing_id().alias("i"))
        .groupBy("v")
        .agg(fn.count(fn.lit(1)).alias("n"), fn.min("i").alias("first"))
        .limit(MAX_SA_VALUES + 2)  # a continuous column is refused, not collected
        .collect()
    )
    if not rows:
        raise InputError("the table is empty: there are no records to balance. Provide data rows.")
    present = [r for r in rows if r["v"] is not None]
    check_distinct(sa, len(present), sum(int(r["n"]) for r in present))
    rows.sort(key=lambda r: r["first"])
    n_missing = sum(int(r["n"]) for r in rows if r["v"] is None)
    if n_missing and missing == "error":
        raise InputError(
            f"the sensitive attribute '{sa}' has missing values. Choose to drop those records or "
            "to count 'missing' as a category of its own (CLI: --missing drop|category)."
        )
    counts: dict[str, int] = {}
    for r in rows:  # first appearance, missing as the category MISSING_LABEL where chosen
        if r["v"] is None and missing != "category":
            continue
        label = MISSING_LABEL if r["v"] is None else str(r["v"])
        counts[label] = counts.get(label, 0) + int(r["n"])
    return counts
