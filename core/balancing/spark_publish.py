"""PP publication on Apache Spark (issue 11): rows drawn and perturbed on the executors, for
tables larger than memory; no record is collected to the driver.

The plan is the release plan of the in-memory path (`core.balancing.release`): only the exact
value counts reach the driver, the plan's noise is drawn there through the same
`DiscreteLaplace`, and the sub-tables' `PPRandomization` objects are recorded on the accountant
exactly as in memory (same labels, ρ1ᵢ, retention pᵢ, domain size mᵢ, posterior bound).

Per-row randomness is DERIVED FROM A SECRET KEY, not drawn per record in the driver (that would
ship one draw per record to the executors). The key is 248 bits drawn in the driver from the
release's noise source, under the sub-table mechanisms (secure mode: OpenDP's sampler over OS
entropy; seeded mode: the seed, reproducible and labelled). It is never written out.

    draw(tag, id, n) = (first 120 bits of SHA-256(key ':' tag ':' id)) mod n

`tag` separates the uses (slot, keep, pick, output shuffle); `mod n` for n < 2^63 is biased by
at most n / 2^120 < 2^-57, where the in-memory path samples exactly. The mechanism is the
in-memory one (`core.balancing.assign`): with the SA alone the rows are the plan's slots; with
declared columns each record takes a uniformly drawn slot of its value (of all slots when its
value has none), then keeps its value with probability p_i = a/b (draw(keep) < a) or takes the
draw(pick)-th value of D_i. Privacy claim: as `core.balancing.publish.publish`.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.balancing.assign import Slots
from core.balancing.colspec import Kind, OutColumn, column_spec
from core.balancing.names import SEEDED_VALUE
from core.balancing.publish import ROWS_FROM_RECORDS, ROWS_FROM_SLOTS, publication_metadata
from core.balancing.records import MISSING_LABEL
from core.balancing.release import ReleasePlan, ReleaseSettings, release_plan
from core.privacy import Accountant, Noise

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


def _key_under_mechanisms(plan: ReleasePlan, accountant: Accountant) -> str:
    """Record every sub-table mechanism on the accountant; the key is drawn under the first."""
    key = None
    for m in plan.mechanisms:
        with accountant.drawing(m) as noise:
            if key is None:
                key = secret_key(noise)
    return key


def _boolean_columns(frame, names: Sequence[str]) -> set[str]:
    """The declared columns whose every present value is a boolean spelling (true/false in any
    case): the columns pandas and DuckDB read as booleans, which Spark reads as text. Owner-side
    formatting of columns that are published unchanged anyway."""
    from pyspark.sql import functions as fn

    if not names:
        return set()

    def is_boolean(name: str):
        col = fn.col(f"`{name}`")
        ok = col.isNull() | fn.lower(fn.trim(col)).isin("true", "false")
        return fn.min(fn.when(ok, 1).otherwise(0)).alias(name)

    row = frame.select(*[is_boolean(n) for n in names]).collect()[0]
    return {n for n in names if row[n] == 1}


def publish_spark(
    spark,
    frame,
    sa: str,
    counts: dict[str, int],
    columns: Sequence[str],
    settings: ReleaseSettings,
    accountant: Accountant,
    out: Path,
) -> tuple[dict, ReleasePlan]:
    """Publish `frame` (whose exact SA counts, per `settings.missing`, are `counts`) as one CSV
    at `out`; returns (metadata, release plan). Raises InputError, writing nothing, on a
    refusal. `columns` come from `core.balancing.columns.published_columns`."""
    from pyspark.sql import functions as fn

    plan = release_plan(counts, settings, accountant)
    slots = Slots.of(plan.subtables)
    key = _key_under_mechanisms(plan, accountant)
    from_records = list(columns) != [sa]
    ends = np.cumsum(slots.count)
    runs = spark.createDataFrame(
        [
            (k, int(g), int(loc), int(e - c), int(e))
            for k, (g, loc, c, e) in enumerate(
                zip(slots.group, slots.local, slots.count, ends, strict=True)
            )
        ],
        "_run long, _g int, _loc long, _lo long, _hi long",
    )
    if from_records:
        data = _records_with_slots(frame, sa, slots, settings, key, runs, spark)
    else:  # the plan's slots: one row per slot, no record read
        data = runs.withColumn("_i", fn.explode(fn.sequence(fn.col("_lo"), fn.col("_hi") - 1)))
        data = data.withColumn("_rid", fn.col("_i").cast("string"))
    data = _perturbed(data, plan, slots, key, spark)

    def cell(column: OutColumn):  # core.balancing.colspec: the same columns as the others
        if column.kind is Kind.MARKER:
            return fn.lit(SEEDED_VALUE).alias(column.name)
        if column.kind is Kind.SA:
            return fn.col("_y").alias(column.name)
        if column.kind is Kind.SUBTABLE:
            return (fn.col("_g") + 1).alias(column.name)
        value = fn.col(f"`{column.name}`").cast("string")
        if column.name in boolean:  # read as text ('True'): one spelling, as pandas and DuckDB
            value = fn.lower(value)
        return fn.coalesce(value, fn.lit(MISSING_LABEL)).alias(column.name)

    spec = column_spec(sa, columns, not accountant.noise.is_secure)
    boolean = _boolean_columns(frame, [c.name for c in spec if c.kind is Kind.DECLARED])
    table = data.orderBy(draw(key, "shuffle", fn.col("_rid"), 2**62), "_rid").select(
        *[cell(c) for c in spec]
    )
    _write_one_csv(table, out)
    metadata = publication_metadata(
        plan,
        settings,
        accountant,
        sa=sa,
        columns=columns,
        rows_from=ROWS_FROM_RECORDS if from_records else ROWS_FROM_SLOTS,
        missing_policy=settings.missing,
    )
    metadata["engine"] = {
        "name": "spark",
        "randomness": "derived: SHA-256 keyed by a 248-bit secret drawn from the noise source "
        "in the driver (never written); draws mod n biased by at most n / 2^120 < 2^-57",
    }
    return metadata, plan


def _records_with_slots(frame, sa, slots: Slots, settings, key, runs, spark):
    """Each record's slot: uniform among its value's slots (all slots if its value has none)."""
    from pyspark.sql import functions as fn

    value = fn.col(sa).cast("string")
    if settings.missing == "category":
        value = fn.coalesce(value, fn.lit(MISSING_LABEL))
    data = frame.withColumn("_v", value).where(fn.col("_v").isNotNull())
    data = data.withColumn("_rid", fn.monotonically_increasing_id())
    totals = slots.value_totals()
    first = np.concatenate(([0], np.cumsum(totals)[:-1]))
    per_value = spark.createDataFrame(
        [(v, int(t), int(f)) for v, t, f in zip(slots.values, totals, first, strict=True)],
        "_pv string, _total long, _first long",
    )
    data = data.join(fn.broadcast(per_value), data["_v"] == per_value["_pv"], "left")
    high = fn.coalesce(fn.col("_total"), fn.lit(slots.n_slots))
    data = data.withColumn(
        "_i", fn.coalesce(fn.col("_first"), fn.lit(0)) + draw(key, "slot", fn.col("_rid"), high)
    )
    return data.join(fn.broadcast(runs), (data["_i"] >= runs["_lo"]) & (data["_i"] < runs["_hi"]))


def _perturbed(data, plan: ReleasePlan, slots: Slots, key, spark):
    """`_y`: the row's value kept with p_i, else the draw(pick)-th value of D_i."""
    from pyspark.sql import functions as fn

    params = spark.createDataFrame(
        [(g, s.p.numerator, s.p.denominator, s.m) for g, s in enumerate(plan.subtables)],
        "_pg int, _num long, _den long, _m long",
    )
    domain = spark.createDataFrame(
        [(g, k, x) for g, d in enumerate(slots.domains) for k, x in enumerate(d)],
        "_dg int, _dk long, _dx string",
    )
    data = data.join(fn.broadcast(params), data["_g"] == params["_pg"])
    keep = draw(key, "keep", fn.col("_rid"), fn.col("_den")) < fn.col("_num")
    local = fn.when(keep, fn.col("_loc")).otherwise(draw(key, "pick", fn.col("_rid"), fn.col("_m")))
    data = data.withColumn("_k", local)
    data = data.join(
        fn.broadcast(domain), (data["_g"] == domain["_dg"]) & (data["_k"] == domain["_dk"])
    )
    return data.withColumn("_y", fn.col("_dx"))


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
