"""The C_u sampling fast path (issue 11) selects exactly what ranking every unit selects.

`core.dpsql.sql.sampling` ranks only units with more than C_u partitions. The reference here is the
previous one-window form: every (unit, partition) row keyed with the same salted key and ranked
within its unit. For the same seed the cross-user stage must be identical row for row (units
with more and with fewer than C_u partitions, NULL keys, NULL values, joins, row-level
aggregates), and so must the released rows. A golden value computed with the code before the
change pins the key itself."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from sqlglot import exp

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.dpsql.sql.sampling_key import sampling_key
from core.dpsql.sql.stages import assemble
from core.privacy import Noise
from tests.dpsql.helpers import release_of


def tables() -> dict[str, pd.DataFrame]:
    """300 units: a third touch 1-2 groups (light), the rest up to 12 (heavy); NULL keys and
    NULL / out-of-bounds values; a second key with few values."""
    rng = np.random.default_rng(5)
    rows = []
    for uid in range(1, 301):
        width = int(rng.integers(1, 3)) if uid % 3 == 0 else int(rng.integers(1, 13))
        cats = rng.choice(12, size=width, replace=False)
        for _ in range(int(rng.integers(1, 6))):
            rows.append((uid, int(rng.choice(cats)), int(rng.integers(0, 2))))
    uid, cat, flag = (np.array(c) for c in zip(*rows, strict=True))
    amount = np.round(rng.normal(30, 25, uid.size), 1)
    amount[rng.random(uid.size) < 0.1] = np.nan
    g = np.array([f"g{c}" for c in cat], dtype=object)
    g[rng.random(uid.size) < 0.05] = None
    orders = pd.DataFrame({"uid": uid, "g": g, "flag": flag, "amount": amount})
    people = pd.DataFrame({"uid": np.arange(1, 301), "team": [f"t{u % 4}" for u in range(300)]})
    return {"orders": orders, "people": people}


OPT = "OPTIONS (epsilon = 50, delta = 1e-5, max_groups_contributed = {cu})"
QUERIES = {
    "count_sum_avg": "SELECT WITH ANONYMIZATION {opt} g, ANON_COUNT(*, 3) AS c, "
    "ANON_SUM(amount, 0, 50) AS s, ANON_AVG(amount, 0, 50) AS a FROM orders GROUP BY g",
    "two_keys_join": "SELECT WITH ANONYMIZATION {opt} g, team, ANON_COUNT(amount, 2) AS c, "
    "ANON_SUM(amount, -10, 40) AS s FROM people JOIN orders USING (uid) GROUP BY g, team",
    "row_level": "SELECT WITH ANONYMIZATION {opt} g, flag, ANON_VAR(amount, 0, 60) AS v, "
    "ANON_PERCENTILE_CONT(amount, 0.5, 0, 60) AS m FROM orders GROUP BY g, flag",
}


def catalog() -> Catalog:
    cat = Catalog()
    for name, frame in tables().items():
        cat.add_private(name, frame, "uid")
    return cat


def rank_every_unit(plan) -> list[tuple[str, exp.Select]]:
    """The pre-fast-path stages: key every (unit, partition) row, rank within each unit."""
    names = [n for n, _ in plan.stages]
    before = plan.stages[: names.index("per_user") + 1]
    after = plan.stages[names.index("sampled") + 1 :]
    nk = len(plan.query.keys)
    key = sampling_key(
        [exp.column("_uid"), *[exp.column(f"k{i}") for i in range(nk)]], plan.plan.salt
    )
    keyed = exp.select("*", exp.alias_(key, "_r")).from_("per_user")
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[exp.column("_uid")],
        order=exp.Order(expressions=[exp.Ordered(this=exp.column("_r"))]),
    )
    cu = plan.query.options.max_groups_contributed
    sampled = exp.select("*").from_("keyed")
    sampled.set("qualify", exp.Qualify(this=exp.LTE(this=rank, expression=exp.Literal.number(cu))))
    return [*before, ("keyed", keyed), ("sampled", sampled), *after]


def sorted_rows(engine: Engine, sql: str) -> list[tuple]:
    names, rows = engine.fetch(sql)
    norm = [tuple(sorted(v, key=repr) if isinstance(v, list) else v for v in row) for row in rows]
    return sorted(norm, key=repr)


def stage(plan, stages, name: str) -> str:
    names = [n for n, _ in stages]
    upto = stages[: names.index(name) + 1]
    return assemble(plan.relation, upto, exp.select("*").from_(name), total=True).sql("duckdb")


@pytest.fixture(scope="module")
def setup():
    cat = catalog()
    return cat, Engine(cat)


@pytest.mark.parametrize("name", sorted(QUERIES))
@pytest.mark.parametrize("cu", [1, 3])
@pytest.mark.parametrize("seed", [0, 7])
def test_cross_user_stage_identical_to_ranking_every_unit(setup, name, cu, seed):
    cat, engine = setup
    plan = prepare(QUERIES[name].format(opt=OPT.format(cu=cu)), cat, Noise.seeded(seed)).staged
    reference = rank_every_unit(plan)
    # the data has both kinds of unit, so both branches of the fast path are exercised
    _, sizes = engine.fetch(stage(plan, plan.stages, "unit_sizes"))
    counts = [n for _, n in sizes]
    assert min(counts) <= cu < max(counts)
    new_sampled = sorted_rows(engine, stage(plan, plan.stages, "sampled"))
    old_sampled = sorted_rows(engine, stage(plan, reference, "sampled"))
    assert len(new_sampled) == len(old_sampled)
    new_cross = sorted_rows(engine, stage(plan, plan.stages, "cross_user"))
    old_cross = sorted_rows(engine, stage(plan, reference, "cross_user"))
    assert new_cross == old_cross
    # and a different salt does choose differently (the key is not ignored)
    other = prepare(QUERIES[name].format(opt=OPT.format(cu=cu)), cat, Noise.seeded(seed + 100))
    if cu == 1:
        assert sorted_rows(engine, stage(other.staged, other.staged.stages, "sampled")) != (
            sorted_rows(engine, stage(plan, plan.stages, "sampled"))
        )


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_released_rows_unchanged(setup, name):
    cat, engine = setup
    sql = QUERIES[name].format(opt=OPT.format(cu=2))
    noise = Noise.seeded(3)
    fast = release_of(prepare(sql, cat, noise), engine, noise)
    noise = Noise.seeded(3)
    prepared = prepare(sql, cat, noise)
    prepared.staged.stages = rank_every_unit(prepared.staged)
    slow = release_of(prepared, engine, noise)
    pd.testing.assert_frame_equal(fast.table, slow.table)
    assert fast.released.partitions_released == slow.released.partitions_released > 0


def test_cross_user_stage_pinned_to_the_code_before_the_fast_path(setup):
    """Computed with the one-window code (commit 9e17c47) for this data, query and seed."""
    cat, engine = setup
    sql = QUERIES["two_keys_join"].format(opt=OPT.format(cu=2))
    plan = prepare(sql, cat, Noise.seeded(0)).staged
    rows = sorted(engine.fetch(plan.stage_sql("cross_user"))[1], key=repr)
    assert (len(rows), sum(r[2] for r in rows), sum(r[3] for r in rows)) == (52, 479, 583)
    assert sum(r[4] or 0 for r in rows) == 104530444291
    digest = hashlib.sha256(repr(rows).encode()).hexdigest()
    assert digest == "1bc432b078a702fafec6e1ce55c7cf4ebe65328aafad183e7f666eb24a06c54a"
