"""Zero-noise semantics (spec §5): epsilon = 1e20 makes the noise vanish, so released values
must equal the hand-computed values of the compliance vectors."""

from __future__ import annotations

import pandas as pd
import pytest

EXACT = "epsilon = 1e20, delta = 0.7, max_groups_contributed = 1"
TOL = 2.0**-20  # integerisation uses 2^-j with j >= 20 here


def dp(select_list: str, table: str = "t", options: str = EXACT, tail: str = "") -> str:
    return f"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS ({options}) {select_list} FROM {table} {tail}"


def value(result, column: str):
    assert result.table.shape[0] == 1
    return result.table[column].iloc[0]


@pytest.mark.parametrize(
    ("sql_list", "table", "expected"),
    [
        (
            "SUM(int64_val, contribution_bounds_per_group => (2, 3)) AS v",
            "t1",
            18,
        ),  # NULL-safe clamp
        ("SUM(int64_val, contribution_bounds_per_group => (2, 3)) AS v", "t2", 8),  # sums 1, 12, 3
        ("AVG(int64_val, contribution_bounds_per_group => (2, 3)) AS v", "t2", 2.1333333333333333),
        ("AVG(int64_val, contribution_bounds_per_group => (2, 3)) AS v", "t1", 2.25),
        ("SUM(double_val, contribution_bounds_per_group => (0, 10)) AS v", "t1", 13),
        ("SUM(double_val, contribution_bounds_per_group => (0, 10)) AS v", "t2", 11),
        ("AVG(double_val, contribution_bounds_per_group => (0, 10)) AS v", "t1", 1.625),
        (
            "AVG(double_val, contribution_bounds_per_group => (0, 10)) AS v",
            "t2",
            1.3333333333333335,
        ),
        ("COUNT(*, contribution_bounds_per_group => (0, 10)) AS v", "t2", 10),
        ("COUNT(double_val, contribution_bounds_per_group => (0, 10)) AS v", "t2", 8),
        ("VAR_POP(double_val, contribution_bounds_per_row => (2, 3)) AS v", "t2", 0.125),
        ("VAR_POP(int64_val, contribution_bounds_per_row => (2, 3)) AS v", "t2", 0.1875),
        (
            "STDDEV_POP(double_val, contribution_bounds_per_row => (2, 3)) AS v",
            "t2",
            0.35355339059327379,
        ),
        (
            "STDDEV_POP(int64_val, contribution_bounds_per_row => (2, 3)) AS v",
            "t2",
            0.4330127018922193,
        ),
        ("VAR_POP(double_val, contribution_bounds_per_row => (10, 100)) AS v", "t4", 2025),
        ("STDDEV_POP(double_val, contribution_bounds_per_row => (2, 3)) AS v", "t4", 0.5),
        ("PERCENTILE_CONT(double_val, 0.4, contribution_bounds_per_row => (1, 3)) AS v", "t2", 1.5),
        ("PERCENTILE_CONT(int64_val, 0.6, contribution_bounds_per_row => (1, 3)) AS v", "t2", 2),
        ("COUNT(DISTINCT uid) AS v", "t2", 3),
    ],
)
def test_zetasql_compliance_vectors(run_sql, request, sql_list, table, expected):
    df = request.getfixturevalue(table)
    result = run_sql(dp(sql_list), {"t": df})
    assert value(result, "v") == pytest.approx(expected, abs=TOL)


def test_two_aggregates_count_skips_nulls(run_sql, t1):
    sql = dp(
        "SUM(int64_val, contribution_bounds_per_group => (2, 3)) AS s, "
        "COUNT(double_val, contribution_bounds_per_group => (0, 10)) AS c"
    )
    result = run_sql(sql, {"t": t1})
    assert value(result, "s") == pytest.approx(18, abs=TOL)
    assert value(result, "c") == 8


def test_paper_form_gives_the_same_values(run_sql, t2):
    sql = (
        f"SELECT WITH ANONYMIZATION OPTIONS ({EXACT}) ANON_SUM(int64_val, 2, 3) AS s, "
        "ANON_AVG(int64_val CLAMPED BETWEEN 2 AND 3) AS a, ANON_COUNT(*, 10) AS c, "
        "ANON_VAR(double_val, 2, 3) AS v FROM t"
    )
    result = run_sql(sql, {"t": t2})
    assert value(result, "s") == pytest.approx(8, abs=TOL)
    assert value(result, "a") == pytest.approx(2.1333333333333333, abs=TOL)
    assert value(result, "c") == 10
    assert value(result, "v") == pytest.approx(0.125, abs=TOL)


def test_quantile_ties_return_an_optimal_candidate(run_sql, t2):
    sql = dp("PERCENTILE_CONT(double_val, 0.1, contribution_bounds_per_row => (-2, 10)) AS v")
    v = value(run_sql(sql, {"t": t2}), "v")
    assert -1.5 < v <= -0.5 + 1e-12


@pytest.mark.parametrize(("cu", "expected_total"), [(3, 30), (2, 20), (1, 10)])
def test_stability_bounding_with_public_cross_join(run_sql, t1, cu, expected_total):
    """Vector 13: every unit reaches all 3 public groups, C_u of them survive sampling."""
    xs = pd.DataFrame({"x": [1, 2, 3]})
    sql = dp(
        "x, COUNT(*, contribution_bounds_per_group => (0, 1)) AS c",
        "t CROSS JOIN xs",
        f"epsilon = 1e20, delta = 0.7, max_groups_contributed = {cu}",
        "GROUP BY x",
    )
    from core.dpsql.catalog import Catalog
    from core.dpsql.execute.engine import Engine
    from core.dpsql.service import prepare
    from core.privacy import Noise

    catalog = Catalog()
    catalog.add_private("t", t1, "uid")
    catalog.add_public("xs", xs)
    prepared = prepare(sql, catalog, Noise.seeded(5))
    cross = Engine(catalog).frame(prepared.staged.sql("duckdb", executable=True))
    assert int(cross["s0"].sum()) == expected_total
    assert int(cross["n_units"].sum()) == expected_total
    if cu == 3:
        result = run_sql(sql, {"t": t1}, public={"xs": xs})
        assert sorted(result.table["c"]) == [10, 10, 10]


def test_tiny_delta_thresholds_the_global_partition(run_sql, t1):
    sql = dp(
        "SUM(double_val, contribution_bounds_per_group => (0, 10)) AS v",
        options="epsilon = 100, delta = 1e-220, max_groups_contributed = 1",
    )
    result = run_sql(sql, {"t": t1})
    assert result.table.empty
    assert result.released.partitions_released == 0


def test_employee_orders_by_hand(run_sql):
    """Multi-row users, a NULL user and NULL amounts, hand-computed per department."""
    emp = pd.DataFrame(
        {"uid": pd.array([1, 2, 3, 4, 5, 6, None], dtype="Int64"),
         "dept": ["HR", "HR", "HR", "IT", "IT", "IT", "HR"]}
    )  # fmt: skip
    orders = pd.DataFrame(
        {"uid": pd.array([1, 1, 1, 2, 3, 4, 5, 5, 6, None], dtype="Int64"),
         "amount": [10.0, 20.0, 200.0, None, 40.0, 5.0, 50.0, 60.0, None, 99.0]}
    )  # fmt: skip
    sql = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e20, delta = 0.7, "
        "max_groups_contributed = 1) dept, ANON_COUNT(*, 2) AS c, ANON_COUNT(amount, 5) AS cv, "
        "ANON_SUM(amount, 0, 100) AS s, ANON_AVG(amount, 0, 100) AS a, "
        "COUNT(DISTINCT uid) AS n FROM Employee E JOIN Orders O USING (uid) "
        "GROUP BY dept ORDER BY dept"
    )
    result = run_sql(sql, {"Employee": emp, "Orders": orders})
    t = result.table.set_index("dept")
    # HR: uid1 rows 3 (clamped to 2), uid2 1 row, uid3 1 row; the NULL uid row is dropped
    assert t.loc["HR", "c"] == 2 + 1 + 1
    assert t.loc["HR", "cv"] == 3 + 0 + 1
    # per-unit sums: uid1 230 -> 100, uid2 NULL (not counted), uid3 40
    assert t.loc["HR", "s"] == pytest.approx(140, abs=TOL)
    # per-unit averages: uid1 76.67, uid3 40 -> average of averages; uid2 has none
    assert t.loc["HR", "a"] == pytest.approx((230 / 3 + 40) / 2, abs=1e-5)
    assert t.loc["HR", "n"] == 3
    assert t.loc["IT", "c"] == 1 + 2 + 1
    assert t.loc["IT", "s"] == pytest.approx(5 + 100, abs=TOL)  # uid5: 110 -> 100; uid6 NULL
    assert t.loc["IT", "a"] == pytest.approx((5 + 55) / 2, abs=1e-5)
    assert t.loc["IT", "n"] == 3


def test_heavy_user_reaches_at_most_cu_partitions(catalog_of):
    """A unit with 300 rows over 100 partitions appears in exactly C_u partitions after
    sampling, and every clamped partial lies in [L, U]."""
    from core.dpsql.execute.engine import Engine
    from core.dpsql.service import prepare, stage_tables
    from core.privacy import Noise

    heavy = pd.DataFrame({"uid": 1, "g": [i % 100 for i in range(300)], "x": 50.0})
    light = pd.DataFrame({"uid": range(2, 202), "g": [i % 100 for i in range(200)], "x": 1.0})
    tables = {"t": pd.concat([heavy, light], ignore_index=True)}
    catalog = catalog_of(tables)
    for cu in (1, 3, 7):
        sql = (
            f"SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
            f"max_groups_contributed = {cu}) g, ANON_SUM(x, 0, 10) AS s, ANON_COUNT(*, 2) AS c "
            "FROM t GROUP BY g"
        )
        prepared = prepare(sql, catalog, Noise.seeded(cu))
        stages = stage_tables(prepared, Engine(catalog), limit=None)
        sampled = stages["sampled"]
        assert (sampled["_uid"] == 1).sum() == cu
        assert sampled.groupby("_uid").size().max() == cu
        clamped = stages["clamped"]
        j = prepared.plan.statistics[0].exponent
        assert clamped["c0"].min() >= 0
        assert clamped["c0"].max() <= 10 * 2**j
        assert clamped["c1"].min() >= 0
        assert clamped["c1"].max() <= 2
        cross = stages["cross_user"]
        assert cross["n_units"].sum() == 200 + cu


def test_secure_mode_runs_every_aggregate_kind(t2):
    """Secure (OpenDP) noise end to end: values are finite and inside the public bounds."""
    from core.dpsql.catalog import Catalog
    from core.dpsql.execute.engine import Engine
    from core.dpsql.service import prepare
    from core.privacy import Noise
    from tests.dpsql.helpers import release_of

    catalog = Catalog()
    catalog.add_private("t", t2, "uid")
    sql = dp(
        "AVG(double_val, contribution_bounds_per_group => (0, 10)) AS a, "
        "STDDEV_POP(double_val, contribution_bounds_per_row => (2, 3)) AS sd, "
        "PERCENTILE_CONT(double_val, 0.5, contribution_bounds_per_row => (1, 3)) AS med",
        options="epsilon = 1e6, delta = 0.7, max_groups_contributed = 1",
    )
    noise = Noise.secure()
    result = release_of(prepare(sql, catalog, noise), Engine(catalog), noise)
    row = result.table.iloc[0]
    assert 0 <= row["a"] <= 10
    assert 0 <= row["sd"] <= 0.5
    assert 1 <= row["med"] <= 3
    assert result.to_dict()["mode"] == "secure"


def test_null_group_key_is_a_partition(run_sql):
    """A NULL key is its own partition and survives the sampling join (null-safe match)."""
    t = pd.DataFrame({"uid": [1, 2, 3, 4], "g": pd.array([None, None, "a", "a"], dtype="string")})
    sql = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e20, delta = 0.7, "
        "max_groups_contributed = 1) g, ANON_COUNT(*, 1) AS c FROM t GROUP BY g ORDER BY g"
    )
    result = run_sql(sql, {"t": t})
    assert result.table["c"].tolist() == [2, 2]
    assert result.table["g"].isna().sum() == 1


def test_sql_sums_are_exact_integers_and_releases_sit_on_the_grid(catalog_of, t1):
    """Floating-point hygiene (spec §7.12): cross_user sums are Python ints (exact, any order),
    and each released SUM is a multiple of 2^-j."""
    from core.dpsql.execute.engine import Engine
    from core.dpsql.release.noise import release
    from core.dpsql.service import prepare
    from core.privacy import Accountant, Noise

    catalog = catalog_of({"t": t1})
    sql = dp("SUM(double_val, contribution_bounds_per_group => (0, 10)) AS s",
             options="epsilon = 1, delta = 0.5, max_groups_contributed = 1")  # fmt: skip
    prepared = prepare(sql, catalog, Noise.seeded(3))
    names, rows = Engine(catalog).fetch(prepared.staged.sql("duckdb", executable=True))
    assert all(isinstance(v, int) for v in rows[0])
    j = prepared.plan.statistics[0].exponent
    assert rows[0][names.index("s0")] == 13 * 2**j
    frame = pd.DataFrame(rows, columns=names)
    for seed in range(20):
        v = release(prepared.plan, frame, Accountant(Noise.seeded(seed))).table["v0"]
        assert all(float(x * 2**j).is_integer() for x in v)


def test_paper_form_min_max_ntile(run_sql, t2):
    """Clamped T2 doubles: 1, 1, 1.5, 1.5, 1.5, 2.5, 2.5, 3 (bounds 1..3). The optimal grid
    candidate is unique for MIN (1), MAX (3) and the 0.4-quantile (1.5)."""
    sql = (
        f"SELECT WITH ANONYMIZATION OPTIONS ({EXACT}) ANON_MIN(double_val, 1, 3) AS lo, "
        "ANON_MAX(double_val, 1, 3) AS hi, ANON_NTILE(double_val, 0.4, 1, 3) AS q FROM t"
    )
    result = run_sql(sql, {"t": t2})
    assert (value(result, "lo"), value(result, "hi"), value(result, "q")) == (1.0, 3.0, 1.5)


def test_public_groups_release_every_public_key(run_sql):
    """PUBLIC_GROUPS: keys from a public table; every public key is released (empty ones as
    pure noise), non-public keys are dropped, no delta is spent and eps is split eps/n."""
    t = pd.DataFrame({"uid": [1, 2, 3], "dept": ["HR", "HR", "Legal"], "x": [1.0, 2.0, 3.0]})
    depts = pd.DataFrame({"dept": ["HR", "IT", "Sales"]})
    sql = (
        "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1e20, max_groups_contributed = 1, "
        "group_selection_strategy = PUBLIC_GROUPS) D.dept, "
        "COUNT(*, contribution_bounds_per_group => (0, 1)) AS c "
        "FROM t JOIN depts D ON t.dept = D.dept GROUP BY D.dept ORDER BY D.dept"
    )
    result = run_sql(sql, {"t": t}, public={"depts": depts})
    assert result.table["dept"].tolist() == ["HR", "IT", "Sales"]
    assert result.table["c"].tolist() == [2, 0, 0]
    out = result.to_dict()
    assert out["delta_spent"] == 0 and out["threshold"]["integer"] is None
    assert out["epsilon_spent"] == pytest.approx(1e20)


def test_public_groups_need_public_keys(run_sql):
    from core.errors import InputError

    t = pd.DataFrame({"uid": [1], "dept": ["HR"]})
    sql = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, max_groups_contributed = 1, "
        "group_selection_strategy = PUBLIC_GROUPS) dept, ANON_COUNT(*, 1) AS c FROM t GROUP BY dept"
    )
    with pytest.raises(InputError, match="DPX-V034"):
        run_sql(sql, {"t": t})
