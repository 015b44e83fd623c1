"""Option ranges (issue 9): every floor and ceiling of `core.dpsql.check.ranges` is enforced before
any data is read, values just inside are accepted, and no corner of the accepted ranges makes
prepare / explain crash."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.dpsql.check import ranges as o
from core.dpsql.execute.engine import Engine
from core.dpsql.service import explain, prepare
from core.errors import InputError
from core.privacy import Noise
from tests.dpsql.helpers import release_of


@pytest.fixture
def catalog(catalog_of):
    users = pd.DataFrame({"uid": range(40), "dept": ["HR", "IT"] * 20, "v": [5.0] * 40})
    return catalog_of({"Users": users})


def query(opts: str, select: str = "ANON_COUNT(*, 1) AS c") -> str:
    return f"SELECT WITH ANONYMIZATION OPTIONS ({opts}) dept, {select} FROM Users GROUP BY dept"


BASE = "epsilon = 1, delta = 1e-5, max_groups_contributed = 1"
MEDIAN = "ANON_MEDIAN(v, 0, 10) AS m"


@pytest.mark.parametrize(
    ("opts", "select", "code"),
    [
        ("epsilon = 1, delta = 5e-324, max_groups_contributed = 2", None, "DPX-V031"),
        (f"epsilon = 1, delta = {o.DELTA_MIN / 10:g}, max_groups_contributed = 1", None, "DPX-V031"),
        ("epsilon = 1e-7, delta = 1e-5, max_groups_contributed = 1", None, "DPX-V030"),
        ("epsilon = 1e400, delta = 1e-5, max_groups_contributed = 1", None, "DPX-V030"),
        ("epsilon = 1, delta = 0.999999, max_groups_contributed = 1", None, None),
        (f"epsilon = 1, delta = 1e-5, max_groups_contributed = {o.MAX_GROUPS + 1}", None, "DPX-V032"),
        (f"{BASE}, max_rows_per_group = {o.MAX_ROWS_PER_GROUP + 1}", MEDIAN, "DPX-V033"),
        (f"{BASE}, max_rows_per_group = 1000000000000000000000", MEDIAN, "DPX-V033"),
        (f"{BASE}, quantile_grid_size = {o.MAX_QUANTILE_GRID + 1}", MEDIAN, "DPX-V033"),
        (f"{BASE}, quantile_grid_size = 100000000000", MEDIAN, "DPX-V033"),
        (f"{BASE}, min_privacy_units_per_group = {o.MAX_MIN_UNITS + 1}", None, "DPX-V033"),
        (f"{BASE}, threshold_weight = 1e-9", None, "DPX-V033"),
        (f"{BASE}, threshold_weight = 1e9", None, "DPX-V033"),
        (BASE, "ANON_SUM(v, 0, 1e300) AS s", "DPX-V022"),
        (BASE, "ANON_SUM(v, -1e16, 0) AS s", "DPX-V022"),
        (BASE, "ANON_VAR(v, 0, 1e200) AS s", "DPX-V022"),
    ],
)  # fmt: skip
def test_out_of_range_options_are_refused_before_reading(catalog, opts, select, code):
    sql = query(opts, select or "ANON_COUNT(*, 1) AS c")
    if code is None:  # delta just under 1 is legal (and useless): the ranges are [floor, 1)
        prepare(sql, catalog, Noise.seeded(0))
        return
    with pytest.raises(InputError, match=code):
        prepare(sql, catalog, Noise.seeded(0))


@pytest.mark.parametrize(
    ("opts", "select"),
    [
        (f"epsilon = 1, delta = {o.DELTA_MIN:g}, max_groups_contributed = 2", None),
        (f"epsilon = {o.EPSILON_MIN:g}, delta = 1e-5, max_groups_contributed = 1", None),
        (f"{BASE}, max_rows_per_group = {o.MAX_ROWS_PER_GROUP}", MEDIAN),
        (f"{BASE}, quantile_grid_size = {o.MAX_QUANTILE_GRID}", MEDIAN),
        (BASE, f"ANON_SUM(v, {-o.MAX_ABS_BOUND:g}, {o.MAX_ABS_BOUND:g}) AS s"),
        (BASE, f"ANON_STDDEV(v, {-o.MAX_ABS_BOUND:g}, {o.MAX_ABS_BOUND:g}) AS s"),
    ],
)  # fmt: skip
def test_values_at_the_limits_run(catalog, opts, select):
    """At each limit the whole path runs: a release or a clean refusal, never a crash."""
    noise = Noise.seeded(0)
    try:
        prepared = prepare(query(opts, select or "ANON_COUNT(*, 1) AS c"), catalog, noise)
    except InputError as err:  # only the pre-existing 'noise scale drowns the result' rule
        assert "too small" in str(err)
        return
    result = release_of(prepared, Engine(catalog), noise)
    assert result.table.shape[1] == 2
    assert result.released.threshold is None or result.released.threshold.integer >= 1


def test_delta_floor_keeps_the_threshold_finite(catalog):
    """At δ = DELTA_MIN and C_u = MAX_GROUPS, δ/C_u is a normal double and T is finite."""
    from core.dpsql.plan.threshold import delta_per_partition, engine_threshold

    d = delta_per_partition(o.DELTA_MIN, o.MAX_GROUPS)
    assert d > 2.3e-308 and d == pytest.approx(o.DELTA_MIN / o.MAX_GROUPS, rel=1e-9)
    assert 1 < engine_threshold(1.0, o.DELTA_MIN, o.MAX_GROUPS) < 2**63


def test_corners_of_the_accepted_ranges_never_crash(catalog):
    """Every combination of extreme accepted values: prepare + explain either work or refuse
    with an InputError (a rule and a fix), never another exception."""
    epsilons = [o.EPSILON_MIN, 1.0, 1e300]
    deltas = [o.DELTA_MIN, 1e-5, 0.999]
    groups = [1, o.MAX_GROUPS]
    rows = [1, o.MAX_ROWS_PER_GROUP]
    selects = [
        "ANON_COUNT(*, 1) AS c",
        f"ANON_SUM(v, {-o.MAX_ABS_BOUND:g}, {o.MAX_ABS_BOUND:g}) AS s",
        f"ANON_VAR(v, 0, {o.MAX_ABS_BOUND:g}) AS s",
        f"ANON_NTILE(v, 0.9, 0, {o.MAX_ABS_BOUND:g}) AS q",
    ]
    outcomes = {"ok": 0, "refused": 0}
    for eps, delta, cu, k, select in itertools.product(epsilons, deltas, groups, rows, selects):
        opts = (
            f"epsilon = {eps!r}, delta = {delta!r}, max_groups_contributed = {cu}, "
            f"max_rows_per_group = {k}, quantile_grid_size = {o.MAX_QUANTILE_GRID}"
        )
        try:
            explain(prepare(query(opts, select), catalog, Noise.seeded(0)))
            outcomes["ok"] += 1
        except InputError:
            outcomes["refused"] += 1
    assert outcomes["ok"] > 0 and sum(outcomes.values()) == 3 * 3 * 2 * 2 * 4


def _literal(value) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float) and value != value:
        return "NULL"
    return repr(value) if not isinstance(value, float) or abs(value) != float("inf") else "1e999"


VALUES = st.one_of(
    st.integers(-(10**25), 10**25),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, 5e-324, 1e-300, 1e300, 2**63, -1, 0.5, 1e21]),
    st.text(alphabet="abcXYZ_ 0.9e-", max_size=6),
)
OPTION_NAMES = [
    "epsilon", "delta", "max_groups_contributed", "max_rows_per_group", "quantile_grid_size",
    "min_privacy_units_per_group", "threshold_weight",
]  # fmt: skip


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    chosen=st.dictionaries(st.sampled_from(OPTION_NAMES), VALUES, min_size=1, max_size=7),
    select=st.sampled_from(
        ["ANON_COUNT(*, 1) AS c", "ANON_SUM(v, -1e15, 1e15) AS s", "ANON_NTILE(v, 0.5, 0, 10) AS q",
         "ANON_STDDEV(v, 0, 10) AS s", "ANON_COUNT(DISTINCT uid) AS u"]
    ),
)  # fmt: skip
def test_any_option_values_are_a_refusal_or_a_release(catalog, chosen, select):
    """Property: whatever values the options hold, the path ends in a release or an InputError
    (a rule code and a message), never another exception."""
    opts = {"epsilon": 1.0, "delta": 1e-5, "max_groups_contributed": 1, **chosen}
    text = ", ".join(f"{k} = {_literal(v)}" for k, v in opts.items())
    noise = Noise.seeded(0)
    try:
        prepared = prepare(query(text, select), catalog, noise)
        release_of(prepared, Engine(catalog), noise).to_dict()
    except InputError as err:
        assert str(err).startswith("DPX-")
