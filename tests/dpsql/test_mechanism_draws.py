"""Issue 16 for DP SQL: every noisy draw goes through a `core.privacy` mechanism object, the
objects that draw are exactly `prepared.mechanisms`, and the query's cost is their composition.

`Noise` is instrumented as in tests/privacy/test_mechanisms.py: each sampler call records the
mechanism under way (`core.privacy.DRAWING`) and the scale it was asked for.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.dpsql.aggregates import quantile as quantile_module
from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.service import check_before_charge, explain, prepare, run
from core.privacy import (
    DRAWING,
    Accountant,
    Cost,
    DiscreteLaplace,
    Exponential,
    Noise,
    NoisyThreshold,
    Overdraw,
    from_json,
    same_mechanism,
)

DP = "SELECT WITH ANONYMIZATION OPTIONS (epsilon = {eps}, delta = 1e-5, max_groups_contributed = 2"
QUERIES = {
    "counts and sums": "dept, ANON_COUNT(*, 3) AS c, ANON_SUM(amount, -5, 100) AS s",
    "average": "dept, ANON_AVG(amount, 0, 100) AS a",
    "variance and stddev": "dept, ANON_VAR(amount, 0, 100) AS v, ANON_STDDEV(amount, 0, 50) AS d",
    "quantiles": "dept, ANON_MEDIAN(amount, 0, 100) AS m, ANON_NTILE(amount, 0.9, 0, 100) AS p",
    "reused unit count": "dept, COUNT(DISTINCT uid) AS n, ANON_SUM(amount, 0, 10) AS s",
    "no keys": "ANON_COUNT(*, 2) AS c, ANON_MEDIAN(amount, 0, 100) AS m",
    "implicit counts (no bounds)": "dept, ANON_COUNT(*) AS n, ANON_COUNT(amount) AS m",
    "expression over aggregates": "dept, ANON_SUM(amount, 0, 100) / ANON_COUNT(*, 3) AS ratio",
}
PUBLIC_GROUPS = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, max_groups_contributed = 1, "
    "group_selection_strategy = PUBLIC_GROUPS) D.dept, ANON_COUNT(*, 2) AS c, "
    "ANON_MEDIAN(amount, 0, 100) AS m FROM Depts D JOIN Orders O ON D.dept = O.dept GROUP BY D.dept"
)
PRE_THRESHOLD = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, "
    "min_privacy_units_per_group = 4) dept, ANON_COUNT(*, 2) AS c FROM Orders GROUP BY dept"
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    rng = np.random.default_rng(3)
    n = 600
    orders = pd.DataFrame(
        {
            "uid": rng.integers(0, 200, n),
            "dept": rng.choice(["HR", "IT", "Ops", "Rare"], n, p=[0.4, 0.4, 0.195, 0.005]),
            "amount": rng.uniform(-10, 120, n).round(2),
        }
    )
    catalog = Catalog()
    catalog.add_private("Orders", orders, "uid")
    catalog.add_public("Depts", pd.DataFrame({"dept": ["HR", "IT", "Ops", "Empty"]}))
    return catalog


@pytest.fixture
def draws(monkeypatch):
    """Every sampler call of `Noise`: (mechanism under way, sampler, scale or size)."""
    seen: list[tuple] = []
    for name in ("discrete_laplace", "laplace", "uniform", "integers"):
        original = getattr(Noise, name)

        def spy(self, *args, _original=original, _name=name, **kwargs):
            seen.append((DRAWING.get(), _name, args[0] if args else kwargs.get("scale")))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Noise, name, spy)
    return seen


def _sql(body: str, eps: float = 1.0) -> str:
    keys = " GROUP BY dept" if body.startswith("dept") else ""
    return f"{DP.format(eps=eps)}) {body} FROM Orders{keys}"


def _release(prepared, catalog, noise):
    engine = Engine(catalog)
    check_before_charge(prepared, engine)
    accountant = Accountant(noise, budget=prepared.cost)
    return run(prepared, engine, accountant), accountant


def _check_draws(prepared, accountant, draws):
    assert accountant.mechanisms == prepared.mechanisms
    assert all(a is b for a, b in zip(accountant.mechanisms, prepared.mechanisms, strict=True))
    noisy = [(m, sampler, scale) for m, sampler, scale in draws if sampler != "integers"]
    assert noisy, "the release drew no noise at all"
    for mechanism, sampler, scale in noisy:
        assert any(mechanism is m for m in prepared.mechanisms), (sampler, mechanism)
        if sampler == "discrete_laplace":  # drawn at the scale the object states
            assert isinstance(mechanism, DiscreteLaplace | NoisyThreshold)
            assert scale == mechanism.scale
        else:  # the exponential mechanism's Gumbel keys (seeded mode)
            assert sampler == "uniform" and isinstance(mechanism, Exponential)
    # the only draw outside a mechanism is the sampling salt (not a privacy statistic)
    assert [s for m, s, _ in draws if m is None] == []


@pytest.mark.parametrize("name", list(QUERIES))
def test_the_mechanisms_that_draw_are_exactly_the_prepared_ones(catalog, draws, name):
    noise = Noise.seeded(11)
    prepared = prepare(_sql(QUERIES[name]), catalog, noise)
    draws.clear()  # the salt drawn by prepare is not a privacy statistic
    result, accountant = _release(prepared, catalog, noise)
    _check_draws(prepared, accountant, draws)
    assert result.mechanisms == prepared.mechanisms
    assert prepared.cost == Cost(1.0, 1e-5) or (
        prepared.cost.epsilon == pytest.approx(1.0) and prepared.cost.delta == 1e-5
    )
    assert accountant.spent == prepared.cost


def test_public_groups_and_pre_threshold_draw_through_their_objects(catalog, draws):
    for sql in (PUBLIC_GROUPS, PRE_THRESHOLD):
        noise = Noise.seeded(5)
        prepared = prepare(sql, catalog, noise)
        draws.clear()
        _, accountant = _release(prepared, catalog, noise)
        _check_draws(prepared, accountant, draws)
    public = prepare(PUBLIC_GROUPS, catalog, Noise.seeded(0))
    assert public.cost.delta == 0 and not any(
        isinstance(m, NoisyThreshold) for m in public.mechanisms
    )


def test_nothing_released_still_records_every_planned_mechanism(catalog, draws):
    """A query whose partitions all fall below T records the same objects (they were charged
    and each drew, on zero or more partitions)."""
    sql = _sql("dept, ANON_COUNT(*, 1) AS c, ANON_MEDIAN(amount, 0, 1) AS m", eps=0.01)
    noise = Noise.seeded(2)
    prepared = prepare(sql.replace("delta = 1e-5", "delta = 1e-12"), catalog, noise)
    draws.clear()
    result, accountant = _release(prepared, catalog, noise)
    assert result.released.partitions_released == 0
    assert accountant.mechanisms == prepared.mechanisms


def test_secure_quantiles_draw_inside_their_mechanism_at_its_scale(catalog, monkeypatch):
    """Secure mode: OpenDP's make_private_quantile is built at the scale the Exponential object
    states and invoked inside `accountant.drawing(mech)`."""
    built, invoked = [], []
    real = quantile_module._opendp_measure

    def spy(candidates, p, scale):
        built.append((len(candidates), scale))
        meas = real(candidates, p, scale)

        class Recording:
            def map(self, d_in):
                return meas.map(d_in)

            def __call__(self, values):
                invoked.append(DRAWING.get())
                return meas(values)

        return Recording()

    monkeypatch.setattr(quantile_module, "_opendp_measure", spy)
    noise = Noise.secure()
    prepared = prepare(_sql("dept, ANON_NTILE(amount, 0.3333, 0, 100) AS q"), catalog, noise)
    quant = next(m for m in prepared.mechanisms if isinstance(m, Exponential))
    result, accountant = _release(prepared, catalog, noise)
    assert accountant.mechanisms == prepared.mechanisms
    assert [scale for n, scale in built if n == 1001] == [quant.scale]  # the public grid
    assert len(invoked) == result.released.partitions_released > 0
    assert all(m is quant for m in invoked)


def test_an_accountant_with_less_than_the_cost_is_refused_before_reading(catalog, monkeypatch):
    noise = Noise.seeded(0)
    prepared = prepare(_sql(QUERIES["counts and sums"]), catalog, noise)
    engine = Engine(catalog)
    reads = []
    monkeypatch.setattr(engine, "frame", lambda sql, exact=True: reads.append(sql))
    short = Cost(prepared.cost.epsilon / 2, prepared.cost.delta)
    with pytest.raises(Overdraw):
        run(prepared, engine, Accountant(noise, budget=short))
    assert reads == []


def test_explain_reads_accuracy_off_the_mechanism_objects(catalog):
    prepared = prepare(_sql(QUERIES["counts and sums"]), catalog, Noise.seeded(0))
    info = explain(prepared)
    by_label = {m.label: m for m in prepared.mechanisms}
    for row in info["budget_split"]:
        mech = by_label[row["label"]]
        assert row["epsilon"] == mech.cost.epsilon and row["delta"] == mech.cost.delta
        if isinstance(mech, DiscreteLaplace):
            stat = next(s for s in prepared.plan.statistics if s.mechanism is mech)
            assert row["half_width_95"] == mech.half_width(0.95) / 2.0**stat.exponent
    selection = next(m for m in prepared.mechanisms if isinstance(m, NoisyThreshold))
    for point in info["survival_curve"]:
        assert point["keep_probability"] == selection.survival(point["units"])
    assert info["threshold"]["integer"] == selection.threshold


def test_released_mechanism_rows_read_back_into_the_same_objects(catalog):
    noise = Noise.seeded(1)
    prepared = prepare(_sql(QUERIES["quantiles"]), catalog, noise)
    result, _ = _release(prepared, catalog, noise)
    rows = result.to_dict()["mechanisms"]
    assert len(rows) == len(prepared.mechanisms)
    for row, mech in zip(rows, prepared.mechanisms, strict=True):
        assert same_mechanism(from_json(row), mech)
