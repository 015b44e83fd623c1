"""Composition made visible (issue 33.5): a dataset's cumulative ε at its total δ, release by
release, under basic and pld; and how many releases a budget buys under each."""

from __future__ import annotations

import math

import pytest

from core.privacy import Cost, DiscreteGaussian, Laplace, NoisyThreshold
from core.privacy.accounting import Accounting, composition
from core.privacy.composition import (
    ChargedRelease,
    cumulative,
    releases_that_fit,
)
from core.privacy.mechanisms import LossKind, PrivacyLoss
from core.registry import Policy, Registry

LAP = PrivacyLoss(LossKind.DISCRETE_LAPLACE, 0.1)


@pytest.fixture
def registry(registry_dir, tmp_path) -> Registry:
    """Two datasets, one per accounting, each with the same mixed releases: Laplace sums,
    a noisy threshold (ε, δ), a discrete Gaussian, and a release charged by cost alone."""
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    reg = Registry(registry_dir)
    releases = [
        [Laplace("sum", sensitivity=1.0, epsilon=0.1)],
        [Laplace("sum", sensitivity=1.0, epsilon=0.1)] * 3,
        [
            NoisyThreshold("keys", sensitivity=1.0, epsilon=0.2, delta=1e-8, threshold=30),
            Laplace("count", sensitivity=1.0, epsilon=0.05),
        ],
        [DiscreteGaussian("count", sensitivity=math.sqrt(10), epsilon=0.3, delta=1e-8)],
        Cost(0.25),
        [Laplace("sum", sensitivity=2.0, epsilon=0.1)] * 6,
    ]
    for name, accounting in (("b", "basic"), ("p", "pld")):
        reg.add_dataset(name, [("t", table)], Policy(20.0, 1e-6), accounting=accounting)
        for mechanisms in releases:
            reg.charge("sql", name, {"q": 1}, mechanisms, "secure")
    return reg


@pytest.mark.parametrize("name", ["b", "p"])
def test_the_last_point_is_the_registry_total_under_both_accountings(registry, name):
    releases = registry.charged_releases(name)
    assert len(releases) == 6 and [r.id for r in releases] == sorted(r.id for r in releases)
    points = cumulative(releases, 1e-6)
    assert [p.count for p in points] == [1, 2, 3, 4, 5, 6]
    assert points[-1].id == releases[-1].id
    last = points[-1]
    assert last.basic_epsilon == pytest.approx(registry.composition(name, "basic").epsilon)
    assert last.basic_delta == pytest.approx(registry.composition(name, "basic").delta)
    assert last.pld_epsilon == pytest.approx(registry.composition(name, "pld").epsilon, rel=1e-12)
    # the dataset's own spend is the last point of its own accounting
    spent = registry.spent(name)[0]
    assert spent == pytest.approx(last.pld_epsilon if name == "p" else last.basic_epsilon)


def test_the_curves_do_not_decrease_and_pld_never_exceeds_basic(registry):
    points = cumulative(registry.charged_releases("p"), 1e-6)
    for before, after in zip(points, points[1:], strict=False):
        assert after.basic_epsilon >= before.basic_epsilon
        assert after.pld_epsilon >= before.pld_epsilon - 1e-12
    assert all(p.pld_epsilon <= p.basic_epsilon for p in points)
    assert points[-1].pld_epsilon < points[-1].basic_epsilon  # it does win by the end
    # each point is the composition of that prefix (an independent recomputation)
    releases = registry.charged_releases("p")
    for p in points:
        losses = [x for r in releases[: p.count] for x in r.losses]
        assert p.pld_epsilon == composition(losses, 1e-6, Accounting.PLD).epsilon


def test_a_long_history_is_sampled_and_keeps_its_last_point():
    """100 Laplace releases of ε 0.1 at δ 1e-6: basic 10, pld about 4.77 (the issue's case)."""
    releases = [ChargedRelease(i + 1, Cost(0.1), (LAP,)) for i in range(100)]
    points = cumulative(releases, 1e-6, max_points=10)
    assert len(points) == 10 and points[-1].count == 100 and points[-1].id == 100
    assert points[-1].basic_epsilon == pytest.approx(10.0)
    assert 4.6 < points[-1].pld_epsilon < 4.8
    assert cumulative([], 1e-6) == []


@pytest.mark.parametrize(
    ("eps", "total"), [(0.1, 1.0), (0.1, 0.3), (0.3, 10.0), (0.25, 2.0), (0.7, 0.5), (1.0, 7.5)]
)
def test_basic_count_is_the_closed_form(eps, total):
    loss = PrivacyLoss(LossKind.DISCRETE_LAPLACE, eps)
    assert releases_that_fit(loss, Cost(total, 1e-6), "basic") == math.floor(total / eps + 1e-9)


def test_basic_count_is_bound_by_delta_too():
    loss = PrivacyLoss(LossKind.APPROXIMATE, 0.01, 1e-7)
    assert releases_that_fit(loss, Cost(10.0, 1e-6), "basic") == 10  # δ: 10 × 1e-7


def test_pld_buys_at_least_basic_and_matches_the_accountant():
    """Budget (10, 1e-6), Laplace ε 0.1: basic 100; pld more — the largest k whose composed ε
    (the registry's figure) fits, checked at k and k + 1."""
    budget = Cost(10.0, 1e-6)
    basic = releases_that_fit(LAP, budget, "basic")
    k = releases_that_fit(LAP, budget, "pld")
    assert basic == 100 and k > 1.5 * basic
    assert composition([LAP] * k, 1e-6, "pld").epsilon <= 10.0
    assert composition([LAP] * (k + 1), 1e-6, "pld").epsilon > 10.0


def test_pure_budget_gives_pld_no_more_than_basic():
    """δ = 0: there is no slack for the PLD, pld equals basic."""
    assert releases_that_fit(LAP, Cost(1.0), "pld") == releases_that_fit(LAP, Cost(1.0), "basic")


def test_counts_grow_with_the_budget():
    for accounting in ("basic", "pld"):
        counts = [releases_that_fit(LAP, Cost(e, 1e-6), accounting) for e in (0.5, 1, 2, 4)]
        assert counts == sorted(counts) and counts[0] < counts[-1]
    assert releases_that_fit(LAP, Cost(0.05, 1e-6), "pld") == 0  # one release does not fit


def test_gaussian_releases_compose_in_zcdp_and_buy_more():
    """A discrete Gaussian at (0.1, 1e-8) per release, budget (1, 1e-6): basic is bound by ε
    (10) and δ (100); pld composes their ρ in zCDP and consumes no δ claims."""
    g = DiscreteGaussian("count", sensitivity=1.0, epsilon=0.1, delta=1e-8)
    assert releases_that_fit(g, Cost(1.0, 1e-6), "basic") == 10
    k = releases_that_fit(g, Cost(1.0, 1e-6), "pld")
    assert k > 50
    assert composition([g.loss()] * k, 1e-6, "pld").spent.fits(Cost(1.0, 1e-6))


def test_a_free_release_stops_at_the_limit():
    assert releases_that_fit(PrivacyLoss(LossKind.NONE, 0.0), Cost(1.0), "pld", limit=64) == 64


def test_a_report_shows_the_composition_up_to_its_release(registry):
    """The report of the third release of 'p' has a Composition section whose rows stop at
    that release; its last row is the registry's composition of those three releases."""
    from core.reports import report_html

    releases = registry.charged_releases("p")
    third = releases[2]
    html = report_html(registry, third.id)
    assert "<h2>Composition</h2>" in html and "dataset budget (pld accounting)" in html
    section = html.split('<table class="composition">')[1].split("</table>")[0]
    assert section.count("<tr>") == 1 + 3  # header + three releases
    upto = [x for r in releases[:3] for x in r.losses]
    assert f"{composition(upto, 1e-6, 'pld').epsilon:.6g}" in section.split("<tr>")[-1]
