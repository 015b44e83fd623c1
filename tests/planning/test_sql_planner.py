"""The DP SQL planner: the planned ε meets every target at the mechanism level, and no smaller
readable ε does; the split, threshold and survival are read off the planned objects."""

import pandas as pd
import pytest

from core.dpsql.catalog import Catalog
from core.dpsql.service import prepare
from core.errors import InputError
from core.planning.search import next_down, round_up
from core.planning.sql import check_targets, plan_sql, prepared_at
from core.planning.sql_targets import parse_target
from core.privacy import Noise, same_mechanism

OPTIONS = "epsilon = {eps}, delta = 1e-5, max_groups_contributed = {cu}"
QUERY = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS ({options}) dept, COUNT(DISTINCT uid) AS n, "
    "SUM(salary, contribution_bounds_per_group => (0, 1000)) AS total, "
    "AVG(salary, contribution_bounds_per_group => (0, 1000)) AS mean_salary "
    "FROM staff GROUP BY dept"
)
NO_UNITS = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS ({options}) dept, COUNT(*, "
    "contribution_bounds_per_group => (0, 3)) AS rows_n FROM staff GROUP BY dept"
)


def catalog() -> Catalog:
    frame = pd.DataFrame({"uid": [1, 2], "dept": ["a", "b"], "salary": [10.0, 20.0]})
    c = Catalog()
    c.add_private("staff", frame.iloc[:0], "uid")  # the schema only: the planner reads no row
    return c


def prepared(eps=1.0, cu=1, text=QUERY):
    return prepare(text.format(options=OPTIONS.format(eps=eps, cu=cu)), catalog(), Noise.seeded(0))


@pytest.mark.parametrize("eps", [0.05, 0.37, 2.0])
def test_replanning_equals_the_real_pipeline_at_that_epsilon(eps):
    direct = prepared(eps)
    replanned = prepared_at(prepared(1.0), eps)
    assert len(direct.mechanisms) == len(replanned.mechanisms)
    for a, b in zip(direct.mechanisms, replanned.mechanisms, strict=True):
        assert same_mechanism(a, b)
    assert direct.cost == replanned.cost


def _targets(*texts):
    return tuple(parse_target(t) for t in texts)


def test_planned_epsilon_meets_every_target_and_the_previous_readable_one_does_not():
    base = prepared()
    targets = _targets("total=2000", "n=5%@300", "mean_salary=40@300")
    plan = plan_sql(base, targets)
    eps = plan.epsilon
    at = prepared_at(base, eps)
    assert all(c.met for c in check_targets(at.plan, targets, 0.95))
    # the mechanisms themselves: a count's half-width is the DiscreteLaplace object's
    n_mech = next(m for m in at.mechanisms if m.label.startswith("n:"))
    assert n_mech.half_width(0.95) <= 0.05 * 300
    below = next_down(eps)
    assert not all(c.met for c in check_targets(prepared_at(base, below).plan, targets, 0.95))
    assert plan.cost.epsilon == pytest.approx(eps)
    assert round_up(eps) == eps


def test_survival_targets_hold_at_the_planned_epsilon():
    base = prepared()
    plan = plan_sql(base, _targets("n=3@40"))
    survival = dict(plan.survival)
    assert survival[40] >= 0.95
    at = prepared_at(base, plan.epsilon)
    assert at.plan.selection.mechanism.survival(40) == pytest.approx(survival[40])
    assert plan.as_written.threshold == at.plan.selection.mechanism.threshold


def test_tighter_targets_need_more_epsilon():
    base = prepared()
    loose = plan_sql(base, _targets("total=4000")).epsilon
    tight = plan_sql(base, _targets("total=1000")).epsilon
    tighter = plan_sql(base, _targets("total=250")).epsilon
    assert loose < tight < tighter


def test_the_optimised_split_is_no_worse_and_meets_its_targets():
    base = prepared()
    plan = plan_sql(base, _targets("total=500", "n=20"))
    assert plan.optimised.epsilon <= plan.epsilon
    assert all(c.met for c in plan.optimised.checks)
    weights = dict(zip(plan.aggregate_names, plan.optimised.weights, strict=True))
    # SUM's sensitivity is 1000x the count's: its target gets the larger share
    assert weights["total"] > weights["n"]


def test_a_larger_cu_needs_more_epsilon():
    plan = plan_sql(prepared(), _targets("total=800", "n=15"))
    eps = {row.max_groups: row.epsilon for row in plan.cu_tradeoff}
    assert eps[1] < eps[2] < eps[4] < eps[8]


def test_threshold_without_a_unit_count_gets_its_own_share():
    base = prepared(text=NO_UNITS)
    plan = plan_sql(base, _targets("rows_n=5@30"))
    assert plan.optimised.threshold_weight is not None
    assert dict(plan.survival)[30] >= 0.95


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("total=0.001", "no epsilon up to"),
        ("total=10%@50", "relative target needs a count"),
        ("mean_salary=5", "add @UNITS"),
        ("nosuch=5", "no aggregate named"),
        ("total=-3", "must be a number > 0"),
        ("total", "cannot read"),
    ],
)
def test_bad_or_infeasible_targets_are_refused_with_one_line(target, words):
    with pytest.raises(InputError) as err:
        plan_sql(prepared(), (parse_target(target),))
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_describe_states_the_basis_and_the_targets():
    plan = plan_sql(prepared(), _targets("total=2000"))
    text = plan.describe()
    assert f"{plan.epsilon:g}" in text and "total within ±2000" in text
    assert "no data was read" in plan.basis
    assert plan.to_json()["epsilon"] == plan.epsilon
