"""Budget split (spec §2.10) and the session ledger: refusal before any data is read."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest

from core.dpsql.budget_split import split_epsilon
from core.dpsql.service import explain, planned_spends, prepare, run
from core.errors import BudgetExceededError
from core.privacy import BudgetLedger, Noise

ZETA = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1.0, delta = 1e-5, "
    "max_groups_contributed = 2, privacy_unit_column = uid) dept, "
    "COUNT(*, contribution_bounds_per_group => (0, 5)) AS c, "
    "SUM(amount, contribution_bounds_per_group => (0, 100)) AS s, "
    "AVG(amount, contribution_bounds_per_group => (0, 100)) AS a "
    "FROM Employee E JOIN Orders O USING (uid) GROUP BY dept"
)


@pytest.fixture
def catalog(catalog_of):
    emp = pd.DataFrame({"uid": range(1, 41), "dept": ["HR", "IT"] * 20})
    orders = pd.DataFrame({"uid": list(range(1, 41)) * 2, "amount": [10.0] * 80})
    return catalog_of({"Employee": emp, "Orders": orders})


def test_split_matches_the_spec_example(catalog):
    """§2.10 table: c, s, a at 0.25 each (a halved), threshold 0.25 with tau 93.10, T 94."""
    info = explain(prepare(ZETA, catalog, Noise.seeded(0)))
    rows = {(r["aggregate"], r["component"]): r for r in info["budget_split"]}
    assert rows[("c", "count")]["epsilon"] == 0.25
    assert rows[("c", "count")]["scale"] == pytest.approx(40)
    assert rows[("s", "sum")]["epsilon"] == 0.25
    assert rows[("s", "sum")]["scale"] == pytest.approx(800)
    assert rows[("a", "count")]["epsilon"] == 0.125
    assert rows[("a", "count")]["scale"] == pytest.approx(16)
    assert rows[("a", "sum")]["scale"] == pytest.approx(800)
    th = info["threshold"]
    assert th["tau"] == pytest.approx(93.103, abs=1e-3)
    assert th["integer"] == 94
    assert th["realised_delta"] <= 1e-5
    assert sum(r["epsilon"] for r in info["budget_split"]) == pytest.approx(1.0, abs=1e-12)


def test_shares_are_exact_fractions(catalog):
    q = prepare(ZETA, catalog, Noise.seeded(0)).query
    shares, reuse = split_epsilon(q)
    assert reuse is None
    assert sum(s.epsilon for s in shares) == Fraction(1)
    assert [s.epsilon for s in shares] == [Fraction(1, 4)] * 4


def test_count_distinct_uid_is_reused_as_threshold(catalog):
    sql = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) "
        "dept, COUNT(DISTINCT uid) AS n, ANON_SUM(amount, 0, 10) AS s "
        "FROM Employee JOIN Orders USING (uid) GROUP BY dept"
    )
    plan = prepare(sql, catalog, Noise.seeded(0)).plan
    assert plan.threshold_mechanism.aggregate == 0
    assert float(plan.threshold_epsilon) == 0.5


def test_ledger_records_every_spend_and_totals_equal_epsilon(catalog):
    ledger = BudgetLedger()
    result = run(prepare(ZETA, catalog, Noise.seeded(1)), _engine(catalog), Noise.seeded(1), ledger)
    assert ledger.epsilon_spent == pytest.approx(1.0)
    assert ledger.delta_spent == pytest.approx(1e-5)
    assert len(ledger.spends) == 5
    assert result.to_dict()["epsilon_spent"] == pytest.approx(1.0)


def test_query_exceeding_the_session_budget_is_refused_before_it_runs(catalog, monkeypatch):
    ledger = BudgetLedger(total_epsilon=1.5)
    noise = Noise.seeded(2)
    engine = _engine(catalog)
    run(prepare(ZETA, catalog, noise), engine, noise, ledger)
    calls = []
    monkeypatch.setattr(engine, "frame", lambda sql: calls.append(sql))
    with pytest.raises(BudgetExceededError) as err:
        run(prepare(ZETA, catalog, noise), engine, noise, ledger)
    assert "Nothing was released" in str(err.value)
    assert calls == []  # no data was read
    assert ledger.epsilon_spent == pytest.approx(1.0)


def test_planned_spends_fit_exactly(catalog):
    spends = planned_spends(prepare(ZETA, catalog, Noise.seeded(0)).plan)
    BudgetLedger(total_epsilon=1.0, total_delta=1e-5).check(spends)


def _engine(catalog):
    from core.dpsql.engine import Engine

    return Engine(catalog)


def test_weights_set_the_split(catalog):
    sql = (
        "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, "
        "max_groups_contributed = 1, threshold_weight = 2) dept, "
        "COUNT(*, contribution_bounds_per_group => (0, 5), weight => 3) AS c, "
        "SUM(amount, contribution_bounds_per_group => (0, 100)) AS s "
        "FROM Employee JOIN Orders USING (uid) GROUP BY dept"
    )
    shares, _ = split_epsilon(prepare(sql, catalog, Noise.seeded(0)).query)
    assert [s.epsilon for s in shares] == [Fraction(3, 6), Fraction(1, 6), Fraction(2, 6)]


def test_full_join_propagates_the_unit_with_coalesce(catalog):
    sql = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) "
        "ANON_COUNT(*, 5) AS c FROM Employee E FULL JOIN Orders O ON E.uid = O.uid"
    )
    plan = prepare(sql, catalog, Noise.seeded(0)).plan
    assert "COALESCE(E.uid, O.uid) AS _uid" in plan.sql("duckdb", pretty=False)
    inner = prepare(sql.replace("FULL JOIN", "JOIN"), catalog, Noise.seeded(0)).plan
    assert "E.uid AS _uid" in inner.sql("duckdb", pretty=False)


def test_charges_come_from_the_mechanisms_that_draw_the_noise(catalog_of, monkeypatch):
    """Typed mechanisms (issue 9): the ledger's ε per entry and the scale of every noise draw
    are read off the same `Mechanism` objects of the plan."""
    from core.dpsql.mechanisms import charges

    emp = pd.DataFrame({"uid": range(1000), "dept": ["HR", "IT"] * 500})
    orders = pd.DataFrame({"uid": range(1000), "amount": [10.0] * 1000})
    catalog = catalog_of({"Employee": emp, "Orders": orders})  # 500 units per dept >> T = 94
    noise = Noise.seeded(4)
    prepared = prepare(ZETA, catalog, noise)
    plan = prepared.plan
    drawn = []
    original = noise.discrete_laplace

    def recording(scale, size=None):
        drawn.append(scale)
        return original(scale, size=size)

    monkeypatch.setattr(noise, "discrete_laplace", recording)
    ledger = BudgetLedger()
    result = run(prepared, _engine(catalog), noise, ledger)
    assert result.released.partitions_released == 2
    mechanisms = [*plan.mechanisms, plan.threshold_mechanism]
    assert sorted(drawn) == sorted(m.scale for m in mechanisms)
    planned = charges(plan)
    assert [c.mechanism for c in planned] == mechanisms  # the very objects, in order
    assert [s.epsilon for s in ledger.spends] == [float(m.epsilon) for m in mechanisms]
    for m in mechanisms:  # b = C_u * Δ / ε_mech
        assert m.scale == pytest.approx(m.max_groups * m.sensitivity / float(m.epsilon))


def test_kinds_are_enums(catalog):
    from core.dpsql.ir import AggKind
    from core.dpsql.mechanisms import Component, MechanismKind

    plan = prepare(ZETA, catalog, Noise.seeded(0)).plan
    assert [a.kind for a in plan.query.aggregates] == [AggKind.COUNT_ROWS, AggKind.SUM, AggKind.AVG]
    assert all(isinstance(m.component, Component) for m in plan.mechanisms)
    assert {m.kind for m in plan.mechanisms} == {MechanismKind.DISCRETE_LAPLACE}


def test_a_plan_whose_charges_do_not_add_up_is_never_run(catalog, monkeypatch):
    """If a mechanism's ε were changed behind the split's back, the charges would no longer add
    up to the query's ε: `charges` refuses before anything is charged or read."""
    import dataclasses

    noise = Noise.seeded(0)
    prepared = prepare(ZETA, catalog, noise)
    first = prepared.plan.mechanisms[0]
    prepared.plan.mechanisms[0] = dataclasses.replace(first, epsilon=first.epsilon / 2)
    engine = _engine(catalog)
    calls = []
    monkeypatch.setattr(engine, "frame", lambda sql: calls.append(sql))
    ledger = BudgetLedger()
    with pytest.raises(AssertionError, match="add up"):
        run(prepared, engine, noise, ledger)
    assert calls == [] and ledger.spends == []
