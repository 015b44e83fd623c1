"""The integer C_u partition key (issue 30, `core.dpsql.sql.partition_key`).

- the key DuckDB computes equals the Python reference, for integer units (the unit's bits,
  extremes and negatives included) and text units (MD5 of the text), NULL and multiple keys;
- property, over random tables (fixed seeds): every unit keeps at most C_u of its own
  partitions, one row each, all of them when it has no more, at most k rows per partition for
  row-level aggregates; a neighbouring table with one more unit (many rows in many partitions)
  changes at most C_u partitions' exact sums, each by at most one unit's bounded contribution;
- uniformity: a unit's partitions are each kept with probability C_u / n_u, and every subset
  of size C_u equally often, over units and over salts (binomial tolerances of 5 sd).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from sqlglot import exp

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.dpsql.sql import partition_key
from core.dpsql.sql.stages import assemble
from core.privacy import Noise

OPT = "OPTIONS (epsilon = 50, delta = 1e-5, max_groups_contributed = {cu}{extra})"


def catalog(frames: dict[str, pd.DataFrame]) -> Catalog:
    cat = Catalog()
    for name, frame in frames.items():
        cat.add_private(name, frame, "uid")
    return cat


def stages(frames: dict[str, pd.DataFrame], query: str, seed: int, names: list[str]):
    """The prepared plan and the rows of each stage in `names` (executed on DuckDB)."""
    cat = catalog(frames)
    prepared = prepare(query, cat, Noise.seeded(seed))
    staged = prepared.staged
    engine = Engine(cat)
    try:
        out = {}
        order = [n for n, _ in staged.stages]
        for name in names:
            upto = staged.stages[: order.index(name) + 1]
            sql = assemble(staged.relation, upto, exp.select("*").from_(name), total=True)
            columns, rows = engine.fetch(sql.sql("duckdb"))
            out[name] = pd.DataFrame(rows, columns=columns, dtype=object)
        return prepared.plan, out
    finally:
        engine.close()


# --- the SQL key is the reference key --------------------------------------------------------

EXTREME_UNITS = [0, 1, -1, 7, 2**31 - 1, 2**32, 2**32 + 5, -(2**40) - 3, 2**62 + 11, 2**63 - 1]
EXTREME_UNITS += [-(2**63) + 1]


@pytest.mark.parametrize("kind", ["integer", "text"])
def test_the_sql_key_equals_the_reference_key(kind):
    units = EXTREME_UNITS if kind == "integer" else ["a", "é|1:2", "", "N", "12", "ünï", "x y"]
    rows = [(u, g, h) for u in units for g in ["g1", None, "|", "ö"] for h in [1, 2]]
    frame = pd.DataFrame(rows, columns=["uid", "g", "h"])
    if kind == "integer":
        frame["uid"] = frame["uid"].astype("int64")
    query = "SELECT WITH ANONYMIZATION {opt} g, h, ANON_COUNT(*, 1) AS c FROM t GROUP BY g, h"
    plan, out = stages({"t": frame}, query.format(opt=OPT.format(cu=3, extra="")), 3, ["keyed"])
    assert plan.integer_unit is (kind == "integer")
    keyed = out["keyed"]
    assert len(keyed) == len(rows)
    for _, row in keyed.iterrows():
        unit = row["_uid"]
        want = partition_key.reference_key(
            unit, [row["k0"], row["k1"]], plan.salt, integer=plan.integer_unit
        )
        assert int(row["_r"]) == want, (unit, row["k0"], row["k1"])
        assert 0 <= int(row["_r"]) < 2**63


def test_no_group_keys_one_partition():
    """Without GROUP BY keys every unit has one partition: all are kept, keyed by the unit."""
    frame = pd.DataFrame({"uid": [1, 1, 2, 3], "v": [1.0, 2.0, 3.0, 4.0]})
    query = "SELECT WITH ANONYMIZATION {opt} ANON_COUNT(*, 2) AS c FROM t"
    plan, out = stages(
        {"t": frame}, query.format(opt=OPT.format(cu=1, extra="")), 0, ["keyed", "sampled"]
    )
    assert "part_keys" not in [n for n, _ in prepare_stages(frame, query)]
    assert sorted(out["sampled"]["_uid"]) == [1, 2, 3]
    for _, row in out["keyed"].iterrows():
        assert int(row["_r"]) == partition_key.reference_key(row["_uid"], [], plan.salt)


def prepare_stages(frame: pd.DataFrame, query: str):
    prepared = prepare(
        query.format(opt=OPT.format(cu=1, extra="")), catalog({"t": frame}), Noise.seeded(0)
    )
    return prepared.staged.stages


def test_integer_unit_follows_the_declared_type():
    ints = pd.DataFrame({"uid": [1, 2], "g": ["a", "b"]})
    texts = pd.DataFrame({"uid": ["1", "2"], "g": ["a", "b"]})
    query = "SELECT WITH ANONYMIZATION {opt} g, ANON_COUNT(*, 1) AS c FROM {t} GROUP BY g"
    opt = OPT.format(cu=1, extra="")
    for frames, table, want in (
        ({"t": ints}, "t", True),
        ({"t": texts}, "t", False),
        ({"t": ints, "u": ints[["uid"]].assign(team="x")}, "t JOIN u USING (uid)", True),
    ):
        plan = prepare(query.format(opt=opt, t=table), catalog(frames), Noise.seeded(0)).plan
        assert plan.integer_unit is want, table


# --- property: every unit's contribution stays bounded -------------------------------------


def random_table(rng: np.random.Generator, units: int) -> pd.DataFrame:
    """Units in 1..14 of 14 partitions (NULL key included), 1..6 rows per partition, values
    inside and outside the bounds, some NULL."""
    rows = []
    for uid in rng.choice(10**12, size=units, replace=False) - 5 * 10**11:
        width = int(rng.integers(1, 15))
        for g in rng.choice(14, size=width, replace=False):
            key = None if g == 13 else f"p{g}"
            for _ in range(int(rng.integers(1, 7))):
                rows.append((int(uid), key, float(rng.normal(5, 8))))
    frame = pd.DataFrame(rows, columns=["uid", "g", "amount"])
    frame.loc[rng.random(len(frame)) < 0.05, "amount"] = np.nan
    return frame


QUERY = (
    "SELECT WITH ANONYMIZATION {opt} g, ANON_COUNT(*, 3) AS c, ANON_SUM(amount, 0, 10) AS s, "
    "ANON_VAR(amount, 0, 10) AS v FROM t GROUP BY g"
)


@pytest.mark.parametrize("seed", range(8))
def test_no_unit_exceeds_cu_partitions_or_k_rows(seed):
    rng = np.random.default_rng(1000 + seed)
    cu, k = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    frame = random_table(rng, 120)
    query = QUERY.format(opt=OPT.format(cu=cu, extra=f", max_rows_per_group = {k}"))
    plan, out = stages({"t": frame}, query, seed, ["per_user", "sampled", "clamped"])
    every = out["per_user"].groupby("_uid")["k0"].apply(lambda s: set(s.fillna("<null>")))
    sampled = out["sampled"]
    assert not sampled.duplicated(["_uid", "k0"]).any()  # one row per (unit, partition)
    kept = sampled.groupby("_uid")["k0"].apply(lambda s: set(s.fillna("<null>")))
    assert set(kept.index) == set(every.index)
    for unit, parts in every.items():
        assert kept[unit] <= parts
        assert len(kept[unit]) == min(cu, len(parts))
    var = plan.aggregates[2].index
    assert (sampled[f"p{var}n"] <= k).all()  # at most k rows per unit and partition
    assert (out["clamped"]["c0"] <= 3).all()


@pytest.mark.parametrize("seed", range(6))
def test_one_more_unit_moves_at_most_cu_partitions_by_one_contribution(seed):
    """Neighbouring tables (one unit with rows in every partition added), the same salt: at
    most C_u partitions' exact sums differ, each by one unit and at most its bounded
    contribution (count <= 3, integerised sum <= 10 * 2^j)."""
    rng = np.random.default_rng(2000 + seed)
    cu = int(rng.integers(1, 4))
    frame = random_table(rng, 80)
    extra = pd.DataFrame(
        [(77, None if g == 13 else f"p{g}", 1e6) for g in range(14) for _ in range(9)],
        columns=["uid", "g", "amount"],
    )
    query = QUERY.format(opt=OPT.format(cu=cu, extra=", max_rows_per_group = 2"))
    plan, a = stages({"t": frame}, query, seed, ["cross_user"])
    _, b = stages({"t": pd.concat([frame, extra], ignore_index=True)}, query, seed, ["cross_user"])
    left = a["cross_user"].set_index("k0", drop=False).fillna({"k0": "<null>"})
    right = b["cross_user"].set_index("k0", drop=False).fillna({"k0": "<null>"})
    left.index = left["k0"]
    right.index = right["k0"]
    changed = [
        p for p in right.index if p not in left.index or not right.loc[p].equals(left.loc[p])
    ]
    assert 0 < len(changed) <= cu
    j = plan.aggregates[1].statistics[0].exponent
    for p in changed:
        before = left.loc[p] if p in left.index else None
        units = right.loc[p, "n_units"] - (before["n_units"] if before is not None else 0)
        assert units == 1
        count = right.loc[p, "s0"] - (before["s0"] if before is not None else 0)
        assert 0 <= count <= 3
        total = right.loc[p, "s1"] - (before["s1"] if before is not None else 0)
        assert 0 <= total <= 10 * 2**j


# --- uniformity ------------------------------------------------------------------------------


def test_each_partition_kept_with_probability_cu_over_n_across_units_and_salts():
    """2,400 units with 3, 5 or 8 partitions, C_u = 2, four salts: each (size, partition) is
    kept in about C_u / n of its 3,200 unit-draws (binomial sd <= 28; bound 5 sd), and for
    n = 5 each of the 10 pairs about 320 times (sd 17; bound 5 sd)."""
    sizes = {0: 3, 1: 5, 2: 8}
    rows = [(u, f"p{g}") for u in range(2400) for g in range(sizes[u % 3])]
    frame = pd.DataFrame(rows, columns=["uid", "g"])
    query = "SELECT WITH ANONYMIZATION {opt} g, ANON_COUNT(*, 1) AS c FROM t GROUP BY g"
    kept: Counter = Counter()
    subsets: Counter = Counter()
    for seed in range(4):
        _, out = stages(
            {"t": frame}, query.format(opt=OPT.format(cu=2, extra="")), seed, ["sampled"]
        )
        for unit, parts in out["sampled"].groupby("_uid")["k0"]:
            n = sizes[unit % 3]
            assert len(parts) == 2
            kept.update((n, p) for p in parts)
            if n == 5:
                subsets[frozenset(parts)] += 1
    for n in sizes.values():
        draws = 800 * 4
        p = 2 / n
        sd = (draws * p * (1 - p)) ** 0.5
        for g in range(n):
            assert abs(kept[(n, f"p{g}")] - draws * p) < 5 * sd, (n, g, kept[(n, f"p{g}")])
    assert set(subsets) == {frozenset(c) for c in combinations([f"p{g}" for g in range(5)], 2)}
    assert all(abs(c - 320) < 5 * (3200 * 0.1 * 0.9) ** 0.5 for c in subsets.values()), subsets


@pytest.mark.parametrize("integer", [True, False])
@pytest.mark.parametrize("cu", [1, 3])
def test_one_unit_over_many_salts_is_uniform(integer, cu):
    """The reference key (which the engines equal): one unit with 6 partitions over 12,000
    salts keeps each partition about C_u / 6 of the time (bound 5 sd)."""
    rng = np.random.default_rng(cu + 10 * integer)
    unit = 123456789 if integer else "person-42"
    parts = [["north"], ["south"], ["east"], ["west"], [None], ["é"]]
    counts: Counter = Counter()
    salts = rng.integers(0, 2**62, size=12_000)
    for salt in salts:
        keys = sorted(
            range(6),
            key=lambda i: partition_key.reference_key(unit, parts[i], int(salt), integer),
        )
        counts.update(keys[:cu])
    p = cu / 6
    sd = (len(salts) * p * (1 - p)) ** 0.5
    assert all(abs(counts[i] - len(salts) * p) < 5 * sd for i in range(6)), counts
