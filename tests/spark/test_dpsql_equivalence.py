"""Spark runs the same staged plan as DuckDB: for the same salt the cross-user stage is equal
exactly (row for row, quantile value lists as multisets), and zero-noise releases match.

The corpus (tests/engine_corpus.py) covers joins, public tables (join and PUBLIC_GROUPS), C_u
sampling (units with more partitions than C_u), clamping, every aggregate kind, NULL keys and
values, and quantiles."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from sqlglot import exp

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.execute.spark_engine import SparkEngine, to_spark_sql
from core.dpsql.service import prepare
from core.dpsql.sql import partition_key
from core.dpsql.sql.sampling_key import reference_key, sampling_key
from core.privacy import Noise
from tests.dpsql.helpers import release_of
from tests.engine_corpus import CORPUS, canonical, query
from tests.engine_corpus import catalog as corpus_catalog


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return corpus_catalog()


@pytest.fixture(scope="module")
def engines(spark, catalog):
    duck, sparky = Engine(catalog), SparkEngine(catalog, session=spark)
    yield duck, sparky
    sparky.close()
    duck.close()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_cross_user_stage_equal_on_spark_and_duckdb(engines, catalog, name):
    """C_u = 2 while most units order from up to 8 categories: sampling is exercised."""
    duck, sparky = engines
    prepared = prepare(query(name, cu=2), catalog, Noise.seeded(5))
    sql = prepared.staged.sql("duckdb", executable=True, pretty=False)
    expected, got = duck.frame(sql), sparky.frame(sql)
    assert list(got.columns) == list(expected.columns)
    assert len(expected) > 0
    assert canonical(got) == canonical(expected)


def test_sampling_really_drops_partitions(engines, catalog):
    """The corpus exercises C_u: with C_u = 1 the per-unit partition count falls, and the
    units kept per partition differ between two salts (identically on both engines)."""
    duck, sparky = engines
    counts = {}
    for seed in (5, 6):
        plan = prepare(query("sum_avg_clamped", cu=1), catalog, Noise.seeded(seed)).staged
        sql = plan.sql("duckdb", executable=True, pretty=False)
        d, s = duck.frame(sql), sparky.frame(sql)
        assert canonical(d) == canonical(s)
        counts[seed] = canonical(d)
        assert sum(d["n_units"]) == 400  # every unit with an order keeps exactly one partition
    assert counts[5] != counts[6]


@pytest.mark.parametrize("name", ["count_join", "public_groups", "var_stddev_quantiles"])
def test_zero_noise_releases_match(engines, catalog, name):
    """epsilon = 1e20: the noise is far below the rounding of any statistic, so both engines'
    releases equal the exact answer on the same sampled data and hence each other."""
    results = []
    for engine in engines:
        noise = Noise.seeded(9)
        prepared = prepare(query(name, eps=1e20), catalog, noise)
        results.append(release_of(prepared, engine, noise))
    duck, sparky = (r.table for r in results)
    assert list(duck.columns) == list(sparky.columns) and len(duck) == len(sparky) > 0
    for column in duck.columns:
        for a, b in zip(duck[column], sparky[column], strict=True):
            if isinstance(a, float) and math.isnan(a):
                assert b is None or (isinstance(b, float) and math.isnan(b)), column
            elif isinstance(a, float):
                assert b == pytest.approx(a, rel=1e-9, abs=1e-9), column
            else:
                assert a == b, column


def test_spark_sql_keeps_null_list_elements_and_drops_try(spark):
    """DuckDB's filtered LIST keeps NULL elements (a value TRY_CAST could not read); the Spark
    translation must too, or quantile inputs would differ between engines."""
    sql = "SELECT LIST(x) FILTER (WHERE y) AS l, TRY(a + 1) AS t FROM s"
    out = to_spark_sql(sql)
    assert "TRANSFORM(COLLECT_LIST(STRUCT(x AS v)) FILTER(WHERE y), s -> s.v)" in out
    assert "TRY(" not in out
    session = spark.newSession()
    session.sql(
        "SELECT * FROM VALUES (1.0D, true, 1), (NULL, true, 1), (3.0D, false, 1) AS s(x, y, a)"
    ).createOrReplaceTempView("s")
    (row,) = session.sql(out.replace(", a + 1 AS t", "")).collect()
    assert sorted(row["l"], key=lambda v: (v is not None, v or 0)) == [None, 1.0]


def test_spark_orders_the_sampling_key_as_duckdb_and_the_reference_do(spark):
    """The Spark form of the key (MD5 hex with the bytes reversed) sorts 500 (unit, key)
    pairs, NULLs and non-ASCII text included, exactly as the 128-bit reference integer does."""
    salt = 2**63 - 7
    pairs = [(u, None if u % 37 == 0 else f"é{u % 11}") for u in range(500)]
    session = spark.newSession()
    session.createDataFrame(pairs, "u BIGINT, g STRING").createOrReplaceTempView("p")
    key = sampling_key([exp.column("u"), exp.column("g")], salt).sql("duckdb")
    sql = to_spark_sql(f"SELECT u, g FROM p ORDER BY {key}")
    assert "MD5_NUMBER" not in sql.upper()
    got = [(r["u"], r["g"]) for r in session.sql(sql).collect()]
    assert got == sorted(pairs, key=lambda p: reference_key(list(p), salt))


@pytest.mark.parametrize("kind", ["integer", "text"])
def test_spark_computes_the_partition_key_as_duckdb_and_the_reference_do(spark, kind):
    """The C_u partition key (issue 30: integer mixing, MD5 words per partition read by CONV on
    Spark) is the same 63-bit integer on Spark, DuckDB and in Python, for extreme and negative
    integer units, text units, NULL and non-ASCII keys."""
    units = [0, -1, 2**32 + 5, -(2**40) - 3, 2**63 - 1, -(2**63) + 1]
    if kind == "text":
        units = ["a", "é|1:2", "", "N"]
    rows = [(u, g) for u in units for g in ["g1", None, "|", "ö"]]
    frame = pd.DataFrame(rows, columns=["uid", "g"])
    cat = Catalog()
    cat.add_private("t", frame, "uid")
    opt = "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2)"
    q = f"SELECT WITH ANONYMIZATION {opt} g, ANON_COUNT(*, 1) AS c FROM t GROUP BY g"
    prepared = prepare(q, cat, Noise.seeded(3))
    assert prepared.plan.integer_unit is (kind == "integer")
    sql = prepared.staged.stage_sql("keyed")
    duck, sparky = Engine(cat), SparkEngine(cat, session=spark)
    try:
        got = {name: engine.frame(sql) for name, engine in (("duckdb", duck), ("spark", sparky))}
    finally:
        sparky.close()
        duck.close()
    salt = prepared.plan.salt
    for name, keyed in got.items():
        assert len(keyed) == len(rows), name
        for _, row in keyed.iterrows():
            k0 = None if row["k0"] is None else row["k0"]
            want = partition_key.reference_key(row["_uid"], [k0], salt, kind == "integer")
            assert int(row["_r"]) == want, (name, row["_uid"], k0)
