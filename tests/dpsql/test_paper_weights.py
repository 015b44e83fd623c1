"""`weight => w` on the paper form (spec dpsql.md §1.3: "on any DP aggregate"), engineer 9b.

Before this change `ANON_SUM(x, 0, 5, weight => 2)` was refused with DPX-V021 "has no
contribution bounds" (the named argument counted as a fourth positional one), and extra
positional arguments after CLAMPED BETWEEN were silently ignored.
"""

from __future__ import annotations

import pytest

from core.dpsql.service import prepare
from core.errors import InputError
from core.privacy import Noise
from tests.dpsql.oracle.corpus import DP
from tests.dpsql.oracle.harness import Victim, difference
from tests.dpsql.oracle.neighbours import neighbours

ZETA = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, "
    "max_groups_contributed = 1, privacy_unit_column = uid)"
)


@pytest.fixture(scope="module")
def catalog():
    return neighbours(Victim.HEAVY).with_victim


def _spends(sql, catalog):
    prepared = prepare(sql, catalog, Noise.seeded(0))
    return [(m.cost.epsilon, m.cost.delta) for m in prepared.mechanisms]


def test_paper_weight_splits_the_budget_like_the_zetasql_form(catalog):
    paper = _spends(
        f"{DP} dept, ANON_SUM(salary, 0, 5, weight => 2) AS s, ANON_COUNT(*, 5) AS c "
        "FROM Users GROUP BY dept",
        catalog,
    )
    zeta = _spends(
        f"{ZETA} dept, SUM(salary, contribution_bounds_per_group => (0, 5), weight => 2) AS s, "
        "COUNT(*, contribution_bounds_per_group => (0, 5)) AS c FROM Users GROUP BY dept",
        catalog,
    )
    assert paper == zeta  # the same Fractions: equal exactly
    # weights 2 : 1 : 1 (sum, count, unit count for the threshold) of epsilon = 1, in drawing
    # order: partition selection first
    assert [e for e, _ in paper] == pytest.approx([0.25, 0.5, 0.25])
    assert sum(e for e, _ in paper) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "call, weight",
    [
        ("ANON_SUM(salary, 0, 5, weight => 2)", 2.0),
        ("ANON_SUM(salary CLAMPED BETWEEN 0 AND 5, weight => 3)", 3.0),
        ("ANON_COUNT(*, 5, weight => 0.5)", 0.5),
        ("ANON_MEDIAN(salary, 0, 100, weight => 4)", 4.0),
        ("ANON_NTILE(salary, 0.9, 0, 100, weight => 1.5)", 1.5),
    ],
)
def test_every_paper_aggregate_takes_a_weight(catalog, call, weight):
    query = prepare(f"{DP} dept, {call} AS s FROM Users GROUP BY dept", catalog, Noise.seeded(0))
    assert [a.weight for a in query.query.aggregates] == [weight]


@pytest.mark.parametrize(
    "call, rule, words",
    [
        ("ANON_SUM(salary, 0, 5, 7)", "DPX-V021", "has 4 positional arguments"),
        ("ANON_SUM(salary CLAMPED BETWEEN 0 AND 5, 3)", "DPX-V021", "has 2 positional"),
        ("ANON_COUNT(*, 5, 2)", "DPX-V021", "ANON_COUNT takes (x, U)"),
        ("ANON_SUM(salary, 0, 5, wieght => 2)", "DPX-V033", "unknown named argument wieght"),
        ("ANON_SUM(salary, 0, 5, weight => 0)", "DPX-V033", "weight must be > 0"),
        ("ANON_SUM(salary, 0, 5, weight => 1, weight => 2)", "DPX-V033", "given twice"),
        ("ANON_SUM(salary, weight => 2)", "DPX-V021", "has no contribution bounds"),
    ],
)
def test_wrong_arguments_are_refused_with_the_right_rule(catalog, call, rule, words):
    with pytest.raises(InputError) as err:
        prepare(f"{DP} dept, {call} AS s FROM Users GROUP BY dept", catalog, Noise.seeded(0))
    text = str(err.value)
    assert text.startswith(rule) and words in text and "Fix:" in text


def test_a_weighted_paper_query_keeps_the_dp_contract():
    sql = (
        f"{DP} dept, ANON_SUM(salary, 0, 100, weight => 3) AS s, ANON_AVG(age, 0, 100) AS a "
        "FROM Users GROUP BY dept"
    )
    for victim in Victim:
        verdict = difference(sql, victim)
        assert not verdict.violations, verdict.summary()
        assert verdict.with_victim.label == "released"
