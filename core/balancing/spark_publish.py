"""PP publication on Apache Spark (issue 11): assign records to sub-tables and perturb them on
the executors, for tables larger than memory; no record is collected to the driver.

Randomness is DERIVED FROM A SECRET KEY, not drawn per record in the driver: per-record draws
made in the driver would have to be shipped to the executors (memory and traffic per record),
while a keyed pseudo-random function lets every executor compute its records' draws on its own.
The key is 248 bits drawn in the driver from `Noise` (secure mode: OpenDP's sampler over OS
entropy; seeded mode: the seed, reproducible and labelled). It is never written out: it lives
only in this process and in the Spark plan sent to the executors, which see the data anyway.

    draw(tag, id, n) = (first 120 bits of SHA-256(key ':' tag ':' id)) mod n

`id` is the record's position key (Spark's monotonically increasing id over the file's splits)
and `tag` separates the uses (record order, keep, pick, output shuffle). Without the key the
draws are unpredictable (SHA-256 as a PRF); `mod n` for n < 2^63 is biased by at most
n / 2^120 < 2^-57, where the in-memory path (`core.balancing.publish`) samples exactly.

Mechanism (as in memory, spec 6.2): record of value x in sub-table i keeps x with probability
p_i = a/b (r = draw(keep) < a with r in {0..b-1}), else takes the draw(pick)-th value of D_i;
rows are written in a keyed random order. Privacy claim: the worst-case posterior of every
SA' value is <= rho2 (checked by `publishable_subtables` before anything is written).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from core.balancing.plan import PartitionPlan
from core.balancing.publish import SUBTABLE_COLUMN, publication_metadata, publishable_subtables
from core.balancing.records import MISSING_LABEL
from core.errors import InputError
from core.privacy import Noise

KEY_WORDS = 4  # 4 x 62 bits = 248-bit key


def secret_key(noise: Noise) -> str:
    """The PRF key as hex text, drawn in the driver from `noise`."""
    return "".join(f"{int(w):016x}" for w in noise.integers(2**62, size=KEY_WORDS))


def draw(key: str, tag: str, rid, n):
    """Spark column: a pseudo-random integer in {0..n-1} per record (see module doc); `n` is a
    column or a Python int below 2^63."""
    from pyspark.sql import functions as fn

    digest = fn.sha2(fn.concat_ws(":", fn.lit(key), fn.lit(tag), rid.cast("string")), 256)
    wide = "decimal(38,0)"
    high = fn.conv(fn.substring(digest, 1, 15), 16, 10).cast(wide)
    low = fn.conv(fn.substring(digest, 16, 15), 16, 10).cast(wide)
    x = high * fn.lit(2**60).cast(wide) + low
    n = n if not isinstance(n, int) else fn.lit(n)
    return fn.pmod(x, n.cast(wide)).cast("bigint")


def publish_spark(
    spark,
    frame,
    sa: str,
    plan: PartitionPlan,
    noise: Noise,
    out: Path,
    *,
    accept_fallback: bool = False,
    missing: str = "error",
    drop_columns: Sequence[str] = (),
    record_order: str = "original",
) -> dict:
    """Perturb `frame` (the table the plan's counts were taken from, same missing-value policy)
    and write one CSV to `out`; returns the metadata. Raises InputError, writing nothing, when
    the plan is refused."""
    from pyspark.sql import Window
    from pyspark.sql import functions as fn

    subtables, fallback = publishable_subtables(plan, accept_fallback)
    for col in drop_columns:
        if col not in frame.columns:
            raise InputError(
                f"column to drop '{col}' not found. Columns: {', '.join(frame.columns)}."
            )
    key = secret_key(noise)
    value = fn.col(sa).cast("string")
    if missing == "category":
        value = fn.coalesce(value, fn.lit(MISSING_LABEL))
    data = frame.withColumn("_v", value).where(fn.col("_v").isNotNull())
    data = data.withColumn("_rid", fn.monotonically_increasing_id())

    groups = [s.counts for s in subtables]
    if fallback:
        data = data.withColumn("_g", fn.lit(0))
    else:  # records of x, in (keyed) order, fill the groups holding x in group order
        order = (
            fn.col("_rid")
            if record_order == "original"
            else draw(key, "order", fn.col("_rid"), 2**62)
        )
        data = data.withColumn(
            "_rank", fn.row_number().over(Window.partitionBy("_v").orderBy(order, "_rid"))
        )
        quotas, filled = [], {}
        for g, group in enumerate(groups):
            for x, count in group.items():
                lo = filled.get(x, 0)
                quotas.append((x, lo + 1, lo + count, g))
                filled[x] = lo + count
        quota = spark.createDataFrame(quotas, "_qv string, _lo long, _hi long, _g int")
        data = data.join(
            fn.broadcast(quota),
            (data["_v"] == quota["_qv"]) & data["_rank"].between(quota["_lo"], quota["_hi"]),
        )
    params = spark.createDataFrame(
        [(g, s.p.numerator, s.p.denominator, s.m) for g, s in enumerate(subtables)],
        "_pg int, _num long, _den long, _m long",
    )
    domain = spark.createDataFrame(
        [(g, k, x) for g, s in enumerate(subtables) for k, x in enumerate(s.counts)],
        "_dg int, _dk long, _dx string",
    )
    data = data.join(fn.broadcast(params), data["_g"] == params["_pg"])
    keep = draw(key, "keep", fn.col("_rid"), fn.col("_den")) < fn.col("_num")
    data = data.withColumn("_keep", keep).withColumn(
        "_k", draw(key, "pick", fn.col("_rid"), fn.col("_m"))
    )
    data = data.join(
        fn.broadcast(domain), (data["_g"] == domain["_dg"]) & (data["_k"] == domain["_dk"]), "left"
    )
    published = fn.when(fn.col("_keep"), fn.col("_v")).otherwise(fn.col("_dx"))
    columns = [
        published.alias(sa) if c == sa else fn.col(f"`{c}`")
        for c in frame.columns
        if c not in drop_columns
    ]
    table = data.orderBy(draw(key, "shuffle", fn.col("_rid"), 2**62), "_rid").select(
        *columns, (fn.col("_g") + 1).alias(SUBTABLE_COLUMN)
    )
    _write_one_csv(table, out)
    metadata = publication_metadata(
        plan, subtables, noise, sa=sa, fallback=fallback, record_order=record_order,
        missing_policy=missing, drop_columns=drop_columns,
    )  # fmt: skip
    metadata["engine"] = {
        "name": "spark",
        "randomness": "derived: SHA-256 keyed by a 248-bit secret drawn from the noise source "
        "in the driver (never written); draws mod n biased by at most n / 2^120 < 2^-57",
    }
    return metadata


def _write_one_csv(table, out: Path) -> None:
    """One CSV file at `out` (written by one task, streamed: no record in the driver)."""
    staging = out.with_name(out.name + ".spark-staging")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        table.coalesce(1).write.csv(str(staging), header=True, mode="overwrite")
        (part,) = staging.glob("part-*.csv")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(part), str(out))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
