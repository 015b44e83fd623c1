"""Budget split (spec §2.10) and the session ledger: refusal before any data is read."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest

from core.dpsql.plan.budget_split import split_epsilon
from core.dpsql.service import explain, prepare, run
from core.errors import BudgetExceededError
from core.privacy import DRAWING, Noise
from tests.dpsql.governed import Charged

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
    assert plan.selection.aggregate == 0
    assert float(plan.selection_epsilon) == 0.5


def test_the_registry_records_every_mechanism_and_the_totals_equal_epsilon(catalog, tmp_path):
    session = Charged(tmp_path)
    result = session.run(prepare(ZETA, catalog, Noise.seeded(1)), _engine(catalog))
    assert session.spent == pytest.approx((1.0, 1e-5))
    (record,) = session.registry.releases("d")
    assert len(record.mechanisms) == 5 and record.mechanisms == result.mechanisms
    assert result.to_dict()["epsilon_spent"] == pytest.approx(1.0)


def test_query_exceeding_the_budget_is_refused_before_it_runs(catalog, monkeypatch, tmp_path):
    session = Charged(tmp_path, epsilon=1.5)
    noise = Noise.seeded(2)
    engine = _engine(catalog)
    session.run(prepare(ZETA, catalog, noise), engine)
    calls = []
    monkeypatch.setattr(engine, "frame", lambda sql: calls.append(sql))
    with pytest.raises(BudgetExceededError) as err:
        session.run(prepare(ZETA, catalog, noise), engine)
    assert "Nothing was charged" in str(err.value)
    assert calls == []  # no data was read
    assert session.spent[0] == pytest.approx(1.0)


def test_the_cost_is_the_composition_of_the_mechanisms_and_equals_the_options(catalog):
    prepared = prepare(ZETA, catalog, Noise.seeded(0))
    assert prepared.cost.epsilon == pytest.approx(1.0, abs=1e-12)
    assert prepared.cost.delta == pytest.approx(1e-5)
    assert sum(m.cost.epsilon for m in prepared.mechanisms) == pytest.approx(1.0, abs=1e-12)
    assert len({m.label for m in prepared.mechanisms}) == len(prepared.mechanisms) == 5


def _engine(catalog):
    from core.dpsql.execute.engine import Engine

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
    staged = prepare(sql, catalog, Noise.seeded(0)).staged
    assert "COALESCE(E.uid, O.uid) AS _uid" in staged.sql("duckdb", pretty=False)
    inner = prepare(sql.replace("FULL JOIN", "JOIN"), catalog, Noise.seeded(0)).staged
    assert "E.uid AS _uid" in inner.sql("duckdb", pretty=False)


def test_registry_rows_are_the_mechanisms_that_draw_the_noise(catalog_of, monkeypatch, tmp_path):
    """The governed run records one registry row per mechanism object (label and ε read off
    the object), and every noise draw is made by one of those objects at its own scale."""
    emp = pd.DataFrame({"uid": range(1000), "dept": ["HR", "IT"] * 500})
    orders = pd.DataFrame({"uid": range(1000), "amount": [10.0] * 1000})
    catalog = catalog_of({"Employee": emp, "Orders": orders})  # 500 units per dept >> T = 94
    noise = Noise.seeded(4)
    prepared = prepare(ZETA, catalog, noise)
    drawn = []
    original = Noise.discrete_laplace

    def recording(self, scale, size=None):
        drawn.append((DRAWING.get(), scale))
        return original(self, scale, size=size)

    monkeypatch.setattr(Noise, "discrete_laplace", recording)
    session = Charged(tmp_path)
    result = session.run(prepared, _engine(catalog))
    assert result.released.partitions_released == 2
    assert result.mechanisms == prepared.mechanisms
    assert [m for m, _ in drawn] == list(prepared.mechanisms)  # one draw each, in order
    assert all(scale == m.scale for m, scale in drawn)
    (record,) = session.registry.releases("d")
    assert [m.label for m in record.mechanisms] == [m.label for m in prepared.mechanisms]
    assert [m.cost for m in record.mechanisms] == [m.cost for m in prepared.mechanisms]
    for stat in prepared.plan.statistics:  # b = C_u * Δ / ε: the object's sensitivity is C_u·Δ
        assert stat.mechanism.sensitivity == stat.max_groups * stat.sensitivity
        assert stat.scale == pytest.approx(stat.max_groups * stat.sensitivity / stat.epsilon)


def test_kinds_are_enums(catalog):
    from core.dpsql.parse.ir import AggKind
    from core.dpsql.plan.statistics import Component
    from core.privacy import MechanismKind

    prepared = prepare(ZETA, catalog, Noise.seeded(0))
    plan = prepared.plan
    assert [a.kind for a in plan.query.aggregates] == [AggKind.COUNT_ROWS, AggKind.SUM, AggKind.AVG]
    assert all(isinstance(m.component, Component) for m in plan.statistics)
    assert [m.kind for m in prepared.mechanisms] == [MechanismKind.THRESHOLD] + [
        MechanismKind.DISCRETE_LAPLACE
    ] * 4


def test_a_mechanism_costing_more_than_the_charge_is_never_run(catalog, monkeypatch):
    """If a statistic's mechanism were swapped for a dearer one after the charge, `run` refuses
    (Overdraw) before any data is read: the accountant holds only what was charged."""
    import dataclasses

    from core.privacy import Accountant, DiscreteLaplace, Overdraw

    noise = Noise.seeded(0)
    prepared = prepare(ZETA, catalog, noise)
    accountant = Accountant(noise, budget=prepared.cost)  # what the caller charged
    first = prepared.plan.statistics[0]
    dearer = DiscreteLaplace(
        first.mechanism.label,
        sensitivity=first.mechanism.sensitivity,
        epsilon=first.epsilon * 2,
    )
    count = prepared.plan.aggregates[0]
    count.statistics = (dataclasses.replace(first, mechanism=dearer), *count.statistics[1:])
    engine = _engine(catalog)
    calls = []
    monkeypatch.setattr(engine, "frame", lambda sql: calls.append(sql))
    with pytest.raises(Overdraw):
        run(prepared, engine, accountant)
    assert calls == [] and accountant.mechanisms == ()
