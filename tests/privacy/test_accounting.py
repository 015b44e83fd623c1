"""Composition under `basic` and `pld` (core.privacy.accounting), checked against independent
computations: dp-accounting's own API called here directly, and the Kairouz-Oh-Viswanath
closed forms (exact optimal composition of k ε-DP mechanisms, Thm 3.3; the bound of Thm 3.5)."""

import math
from fractions import Fraction

import pytest
from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pld
from hypothesis import given, settings
from hypothesis import strategies as st

from core.privacy import (
    Cost,
    DiscreteLaplace,
    Exponential,
    Laplace,
    LatticeLaplace,
    LossKind,
    NoisyThreshold,
    PPRandomization,
    PrivacyLoss,
)
from core.privacy.accounting import Accounting, compose, composition, losses_of, pld_epsilon
from core.privacy.recorded import Recorded, from_json


def kov_exact_delta(k: int, eps: float, eps_total: float) -> float:
    """δ(ε_total) of the optimal composition of k ε-DP mechanisms (KOV 2015, Thm 3.3): the
    hockey-stick divergence of k-fold ε-randomized response, summed over l = #(losses -ε)."""
    p = math.exp(eps) / (1 + math.exp(eps))
    total = 0.0
    for lo in range(k + 1):
        loss = (k - 2 * lo) * eps
        if loss > eps_total:
            prob = math.comb(k, lo) * p ** (k - lo) * (1 - p) ** lo
            total += prob * (1 - math.exp(eps_total - loss))
    return total


def kov_exact_epsilon(k: int, eps: float, delta: float) -> float:
    """Smallest ε_total with kov_exact_delta <= delta (bisection; the function is monotone)."""
    lo, hi = 0.0, k * eps
    if kov_exact_delta(k, eps, 0.0) <= delta:
        return 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if kov_exact_delta(k, eps, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def kov_bound(k: int, eps: float, delta: float) -> float:
    """KOV 2015, Theorem 3.5 (the closed form quoted in issue 33: ~5.8 for 100 × 0.1 at 1e-6)."""
    head = (math.exp(eps) - 1) * eps * k / (math.exp(eps) + 1)
    return min(
        k * eps,
        head + eps * math.sqrt(2 * k * math.log(math.e + math.sqrt(k * eps**2) / delta)),
        head + eps * math.sqrt(2 * k * math.log(1 / delta)),
    )


def direct(eps_counts: dict[float, int], delta: float) -> float:
    """dp-accounting's API, called directly: ε-DP pairs composed, ε at delta."""
    total = None
    for eps, n in eps_counts.items():
        one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, 0.0))
        part = one.self_compose(n)
        total = part if total is None else total.compose(part)
    return total.get_epsilon_for_delta(delta)


def lap(eps, sens=1.0, label="x"):
    return Laplace(label, sensitivity=sens, epsilon=eps)


@pytest.mark.parametrize("k", [1, 2, 5, 10, 30])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_k_fold_pure_laplace_matches_the_exact_optimal_composition(k, eps, delta):
    exact = kov_exact_epsilon(k, eps, delta)
    got, at = compose([lap(eps)] * k, delta)
    # pessimistic discretisation: never below the optimum, within the 1e-4 loss grid per step
    assert got >= exact - 1e-9
    assert got <= exact + k * 1e-4 + 1e-6
    assert at == delta or got == pytest.approx(k * eps)


def test_one_mechanism_composes_to_itself_within_tolerance():
    for eps in (0.05, 0.3, 1.0, 3.0):
        got, _ = compose([lap(eps)], 1e-6)
        assert eps * (1 - 1e-3) <= got <= eps


def test_hundred_laplace_releases_of_eps_0_1_beat_the_closed_form_and_basic():
    got, delta = compose([lap(0.1)] * 100, 1e-6)
    assert delta == 1e-6
    assert got == pytest.approx(direct({0.1: 100}, 1e-6), abs=1e-9)
    assert kov_exact_epsilon(100, 0.1, 1e-6) - 1e-9 <= got <= kov_bound(100, 0.1, 1e-6)
    assert got <= 0.6 * 10.0  # basic: 10
    assert compose([lap(0.1)] * 100, 1e-6, Accounting.BASIC) == pytest.approx((10.0, 0.0))


def test_mixed_mechanisms_agree_with_dp_accounting_called_directly():
    mechs = (
        [lap(0.05, sens=3.0)] * 40
        + [DiscreteLaplace("c", sensitivity=1, epsilon=0.2)] * 7
        + [LatticeLaplace("s", sensitivity=2.0, epsilon=0.125)] * 3
        + [Exponential("e", sensitivity=1.0, epsilon=0.5)]
    )
    got, _ = compose(mechs, 1e-5)
    assert got == pytest.approx(direct({0.05: 40, 0.2: 7, 0.125: 3, 0.5: 1}, 1e-5), abs=1e-9)


def test_approximate_dp_claims_put_their_delta_on_top():
    """A threshold's (ε, δ): ε inside the PLD, δ added — the PLD's ε is taken at D − Σδ."""
    th = NoisyThreshold("t", sensitivity=1, epsilon=0.1, delta=2e-6, threshold=30)
    c = composition([th] * 5 + [lap(0.1)] * 45, 1e-5)
    assert c.delta_claims == pytest.approx(1e-5)
    assert c.epsilon == pytest.approx(5.0)  # no slack left: pld gives nothing, basic stands
    c = composition([th] * 5 + [lap(0.1)] * 45, 2e-5)
    assert c.uses_pld and c.spent.delta == pytest.approx(1e-5) and c.delta == 2e-5
    assert c.epsilon == pytest.approx(direct({0.1: 50}, 1e-5), abs=1e-9)
    assert c.epsilon < 5.0


def test_pure_budget_delta_zero_is_basic():
    assert compose([lap(0.1)] * 100, 0.0) == pytest.approx((10.0, 0.0))
    assert pld_epsilon([lap(0.1).loss()], 0.0) == math.inf


def test_every_mechanism_states_its_loss_profile():
    d = DiscreteLaplace("c", sensitivity=2, epsilon=0.5)
    assert d.loss() == PrivacyLoss(LossKind.DISCRETE_LAPLACE, 0.5, 0.0, 2.0, 4.0)
    assert lap(0.5, 2.0).loss() == PrivacyLoss(LossKind.LAPLACE, 0.5, 0.0, 2.0, 4.0)
    lat = LatticeLaplace("s", sensitivity=1.0 + 2**-10, epsilon=0.5).loss()
    assert lat.kind is LossKind.DISCRETE_LAPLACE and lat.sensitivity == 1025.0
    assert lat.sensitivity / lat.scale == pytest.approx(0.5)
    assert Exponential("e", sensitivity=1.0, epsilon=0.3).loss().kind is LossKind.PURE
    th = NoisyThreshold("t", sensitivity=1, epsilon=0.1, delta=1e-6, threshold=30).loss()
    assert (th.kind, th.epsilon, th.delta) == (LossKind.APPROXIMATE, 0.1, 1e-6)
    reused = NoisyThreshold(
        "t", sensitivity=1, epsilon=0.0, delta=1e-6, threshold=30, reuses="c", noise_scale=2.0
    ).loss()
    assert (reused.kind, reused.epsilon, reused.delta) == (LossKind.APPROXIMATE, 0.0, 1e-6)
    pp = PPRandomization(
        "pp", rho1=Fraction(1, 5), rho2=Fraction(3, 5), retention=Fraction(1, 2), domain_size=4
    )
    assert pp.loss().kind is LossKind.NONE and pp.loss().cost == Cost()
    assert Recorded("old", epsilon=0.2).loss() == PrivacyLoss(LossKind.PURE, 0.2)
    # read back from a registry row, the profile is the same
    assert from_json(d.to_json()).loss() == d.loss()


def test_pp_rho_claims_compose_to_nothing():
    pp = PPRandomization(
        "pp", rho1=Fraction(1, 5), rho2=Fraction(3, 5), retention=Fraction(1, 2), domain_size=4
    )
    assert compose([pp] * 3 + [lap(0.5)], 1e-6) == compose([lap(0.5)], 1e-6)


def test_losses_of_a_release_keep_its_whole_charge():
    mechs = [lap(0.1), lap(0.1)]
    assert [x.epsilon for x in losses_of(mechs, Cost(0.2))] == [0.1, 0.1]
    rest = losses_of(mechs, Cost(0.5, 1e-7))  # charged more than drew: the charge stands
    assert sum(x.epsilon for x in rest) == pytest.approx(0.5)
    assert sum(x.delta for x in rest) == pytest.approx(1e-7)
    assert losses_of([], Cost(0.3)) == [PrivacyLoss(LossKind.PURE, 0.3)]
    in_place = Laplace("deep", sensitivity=1, epsilon=0.3, in_place_of=("a", "b"))
    assert losses_of([lap(0.1), in_place], Cost(0.4)) == [PrivacyLoss(LossKind.PURE, 0.4)]


@settings(max_examples=40, deadline=None)
@given(
    eps=st.lists(st.floats(0.001, 2.0), min_size=1, max_size=30),
    deltas=st.lists(st.sampled_from([0.0, 0.0, 1e-8, 1e-7]), min_size=0, max_size=5),
    target=st.sampled_from([0.0, 1e-9, 1e-7, 1e-6, 1e-4]),
)
def test_pld_never_exceeds_basic(eps, deltas, target):
    mechs = [lap(e) for e in eps] + [
        NoisyThreshold("t", sensitivity=1, epsilon=0.05, delta=d, threshold=40) for d in deltas
    ]
    basic = compose(mechs, target, Accounting.BASIC)
    c = composition(mechs, target)
    assert c.epsilon <= basic[0] + 1e-12
    assert c.spent.delta == pytest.approx(basic[1])
    if c.uses_pld:  # a pld guarantee holds at the target delta, with room for the claims
        assert c.delta == target and c.delta_claims < target
