"""The discrete Gaussian (core.privacy.gaussian): its sampler matches σ, its calibration is
OpenDP's own statement, its accuracy is its own quantile, its charge is what it states, and
k of them compose in zCDP as independent closed forms say."""

import math
from statistics import NormalDist

import numpy as np
import pytest

from core.privacy import Accountant, Cost, DiscreteGaussian, LossKind, Noise, from_json
from core.privacy.accounting import composition
from core.privacy.gaussian import (
    EXACT_TAIL_MAX_SIGMA,
    discrete_gaussian_half_width,
    discrete_gaussian_tail,
    opendp_epsilon,
    sigma_for,
    zcdp_epsilon,
)


def pmf(sigma: float, support: np.ndarray) -> np.ndarray:
    """N_Z(0, σ²) on `support`, normalised over a wide window (independent of the module)."""
    wide = np.arange(-int(60 * sigma) - 5, int(60 * sigma) + 6)
    norm = np.exp(-(wide.astype(float) ** 2) / (2 * sigma**2)).sum()
    return np.exp(-(support.astype(float) ** 2) / (2 * sigma**2)) / norm


def cks_epsilon(rho: float, delta: float) -> float:
    """CKS 2020 Cor. 13 evaluated on a dense grid of α (an independent evaluation)."""
    a = np.exp(np.linspace(np.log(1 + 1e-6), np.log(1e6), 400_000))
    eps = a * rho + (math.log(1 / delta) + (a - 1) * np.log1p(-1 / a) - np.log(a)) / (a - 1)
    return float(eps.min())


def analytic_gaussian_delta(eps: float, sigma: float, sens: float) -> float:
    """Balle & Wang 2018, Thm 8: the exact δ(ε) of the *continuous* Gaussian."""
    phi = NormalDist().cdf
    a, b = sens / (2 * sigma), eps * sigma / sens
    return phi(a - b) - math.exp(eps) * phi(-a - b)


def analytic_gaussian_epsilon(sigma: float, sens: float, delta: float) -> float:
    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if analytic_gaussian_delta(mid, sigma, sens) <= delta else (mid, hi)
    return hi


@pytest.mark.parametrize("sigma", [0.7, 3.0, 25.0])
def test_seeded_sampler_matches_the_distribution(sigma):
    draws = Noise.seeded(11).discrete_gaussian(sigma, 200_000)
    assert draws.dtype == np.int64
    # mean 0 and variance close to σ² (the discrete Gaussian's variance is below σ², by less
    # than 1e-3 relative for σ >= 0.7): tolerances of > 6 standard errors
    se = sigma / math.sqrt(200_000)
    assert abs(draws.mean()) < 6 * se
    assert draws.std() == pytest.approx(sigma, rel=0.012)
    # Kolmogorov distance to the exact CDF: below the α = 1e-6 critical value
    # sqrt(ln(2/α) / 2n) ≈ 0.0085 (conservative for a discrete law)
    support = np.arange(-int(10 * sigma) - 1, int(10 * sigma) + 2)
    cdf = np.cumsum(pmf(sigma, support))
    emp = np.searchsorted(np.sort(draws), support, side="right") / draws.size
    assert np.abs(emp - cdf).max() < math.sqrt(math.log(2 / 1e-6) / (2 * draws.size))


def test_secure_sampler_is_opendp_and_matches_sigma():
    draws = Noise.secure().discrete_gaussian(4.0, 40_000)
    assert draws.dtype == np.int64
    assert draws.std() == pytest.approx(4.0, rel=0.03)  # > 6 standard errors (0.35 %)
    assert abs(draws.mean()) < 6 * 4.0 / math.sqrt(40_000)


@pytest.mark.parametrize("sigma", [0.8, 5.0, 40.0, 5000.0])
def test_half_width_is_the_smallest_integer_quantile(sigma):
    k = discrete_gaussian_half_width(sigma)
    spare = 1 if sigma > EXACT_TAIL_MAX_SIGMA else 0  # one more step above 2^12 (the module)
    assert discrete_gaussian_tail(sigma, k) <= 0.05 < discrete_gaussian_tail(sigma, k - 1 - spare)
    if sigma <= 100:  # against the pmf summed here
        support = np.arange(-k, k + 1)
        assert pmf(sigma, support).sum() >= 0.95
        assert pmf(sigma, np.arange(-k + 1, k)).sum() < 0.95
    assert abs(k - 1.96 * sigma) <= 2  # close to the continuous quantile


@pytest.mark.parametrize(
    ("sens", "eps", "delta"), [(1.0, 1.0, 1e-5), (math.sqrt(10), 0.5, 1e-6), (7.0, 0.1, 1e-7)]
)
def test_calibration_is_opendps_statement_and_tight(sens, eps, delta):
    sigma = sigma_for(sens, eps, delta)
    assert opendp_epsilon(sens, sigma, delta) <= eps
    assert opendp_epsilon(sens, sigma * (1 - 1e-6), delta) > eps * (1 - 1e-5)
    rho = sens**2 / (2 * sigma**2)
    assert zcdp_epsilon(rho, delta) == pytest.approx(cks_epsilon(rho, delta), rel=1e-6)
    # never below the exact ε of the continuous Gaussian (the conversion is an upper bound)
    assert analytic_gaussian_epsilon(sigma, sens, delta) <= eps


def test_neighbouring_outputs_hockey_stick_within_delta():
    """Exact δ(ε) of N_Z(0, σ²) against N_Z(1, σ²) (neighbours one apart) at the calibrated σ:
    the hockey-stick divergence in both directions is at most the stated δ."""
    m = DiscreteGaussian("x", sensitivity=1.0, epsilon=0.8, delta=1e-5)
    support = np.arange(-int(40 * m.scale) - 2, int(40 * m.scale) + 3)
    p, q = pmf(m.scale, support), pmf(m.scale, support - 1)
    for a, b in ((p, q), (q, p)):
        assert np.clip(a - math.exp(m.epsilon) * b, 0, None).sum() <= m.delta


def test_charge_is_what_the_object_states():
    m = DiscreteGaussian("counts", sensitivity=math.sqrt(10), epsilon=0.5, delta=1e-6)
    acc = Accountant(Noise.seeded(3), budget=m.cost)
    out = m.draw(acc, np.arange(5))
    assert out.shape == (5,) and acc.mechanisms == (m,) and acc.spent == Cost(0.5, 1e-6)
    assert m.loss().kind is LossKind.GAUSSIAN and m.loss().rho == pytest.approx(m.rho)
    back = from_json(m.to_json())
    assert back == m and back.scale == m.scale
    with pytest.raises(TypeError):
        m.draw(acc, np.array([0.5]))


@pytest.mark.parametrize(("k", "delta"), [(1, 1e-6), (4, 1e-6), (25, 1e-5)])
def test_k_gaussians_compose_in_zcdp(k, delta):
    """k identical Gaussians under pld: the zCDP closed form at kρ (evaluated independently),
    below basic's kε, and above the exact ε of the composed continuous Gaussian (σ/√k)."""
    m = DiscreteGaussian("g", sensitivity=1.0, epsilon=0.3, delta=1e-8)
    c = composition([m.loss()] * k, delta, "pld")
    expected = cks_epsilon(k * m.rho, delta)
    if k == 1:
        assert c.epsilon <= m.epsilon + 1e-12
    assert c.epsilon == pytest.approx(min(expected, k * m.epsilon), rel=1e-5)
    assert c.epsilon <= k * m.epsilon
    exact = analytic_gaussian_epsilon(m.scale / math.sqrt(k), 1.0, delta)
    assert exact <= c.epsilon <= 1.35 * exact
    if c.method == "zcdp":
        assert c.spent.delta == 0.0 and c.delta == delta  # no Gaussian δ claim is consumed


def test_gaussians_beside_laplace_compose_no_worse_than_basic():
    from core.privacy import Laplace, NoisyThreshold

    g = [DiscreteGaussian(f"g{i}", sensitivity=3.0, epsilon=0.2, delta=1e-8) for i in range(20)]
    lap = [Laplace(f"l{i}", sensitivity=1.0, epsilon=0.1) for i in range(20)]
    th = NoisyThreshold("t", sensitivity=1.0, epsilon=0.1, delta=1e-7, threshold=10)
    losses = [x.loss() for x in (*g, *lap, th)]
    pld = composition(losses, 1e-5, "pld")
    basic = composition(losses, 1e-5, "basic")
    assert pld.epsilon < basic.epsilon
    assert pld.spent.delta >= 1e-7  # the threshold's δ is always consumed
    # each part alone composes to no more than the whole
    alone = composition([x.loss() for x in g], 1e-5, "pld")
    assert alone.epsilon <= pld.epsilon
