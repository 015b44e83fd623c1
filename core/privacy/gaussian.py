"""The discrete Gaussian mechanism: its (ε, δ) calibration through zCDP, its accuracy, and the
typed object that draws it.

Calibration (which conversion, and why). Integer statistics get *discrete* Gaussian noise
N_Z(0, σ²) (exact sampling, no floating-point attacks). Canonne, Kamath and Steinke (2020,
Thm 14) show that adding i.i.d. N_Z(0, σ²) to a vector of integer statistics whose L2
sensitivity is Δ2 is ρ-zCDP with ρ = Δ2²/(2σ²) — the same as the continuous Gaussian. The
analytic Gaussian of Balle and Wang (2018) is exact for the *continuous* Gaussian only, so we
calibrate through zCDP: ρ-zCDP implies (ε, δ)-DP with

    δ = inf_{α>1} exp((α-1)(αρ-ε)) / (α-1) · (1 - 1/α)^α        (CKS 2020, Cor. 13),

which is the conversion OpenDP implements (`make_zCDP_to_approxDP` + `make_fix_delta`).
`sigma_for` finds the smallest σ whose ε at δ is at most the target with our own evaluation of
that formula, then checks the answer with OpenDP's map (and raises σ until OpenDP agrees), so
the (ε, δ) an object states is OpenDP's own statement for its σ. `zcdp_epsilon` is the same
conversion for a composed ρ (what `core.privacy.accounting` uses for Gaussians).

Accuracy: P(|X| > k) for X ~ N_Z(0, σ²) is summed exactly from the probability mass function
for σ <= 2^12; above that the continuous normal tail at k + 1/2 is used (its relative error is
O(1/σ²), below 1e-7 there) and the half-width is rounded up one more step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import ClassVar

import numpy as np

from core.privacy.cost import Cost
from core.privacy.mechanisms import (
    Accountant,
    LossKind,
    Mechanism,
    MechanismKind,
    PrivacyLoss,
    _check_sensitivity,
)

EXACT_TAIL_MAX_SIGMA = 2.0**12  # sum the pmf up to this σ; above it, the normal tail + 1 step


# -- zCDP -> (ε, δ) -------------------------------------------------------------------------------
def _log_delta(rho: float, eps: float, alpha: float) -> float:
    """log of CKS's δ bound at order α (Cor. 13)."""
    return (alpha - 1) * (alpha * rho - eps) - math.log(alpha - 1) + alpha * math.log1p(-1 / alpha)


def _epsilon_at(rho: float, delta: float, alpha: float) -> float:
    """The ε at which order α gives exactly δ: solve log δ = _log_delta(ρ, ε, α) for ε."""
    return alpha * rho + (
        -math.log(delta) - math.log(alpha - 1) + alpha * math.log1p(-1 / alpha)
    ) / (alpha - 1)


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest ε such that a ρ-zCDP mechanism is (ε, δ)-DP by CKS 2020 Cor. 13 (OpenDP's
    conversion): the minimum over α > 1 of `_epsilon_at` (a unimodal function of α, minimised
    by golden-section search on log(α - 1)). 0 for ρ = 0; inf for δ <= 0."""
    if rho <= 0:
        return 0.0
    if not delta > 0:
        return math.inf
    if delta >= 1:
        return 0.0

    def f(u: float) -> float:
        return _epsilon_at(rho, delta, 1.0 + math.exp(u))

    lo, hi = -30.0, 30.0
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(200):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = f(b)
        if hi - lo < 1e-12:
            break
    return max(0.0, min(fa, fb))


@cache
def _opendp_epsilon_map(sigma: float, delta: float):
    from core.privacy.noise import _opendp

    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    meas = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=float(sigma))
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(meas), float(delta))


def opendp_epsilon(l2_sensitivity: float, sigma: float, delta: float) -> float:
    """OpenDP's own ε at δ for Gaussian noise σ on statistics of L2 sensitivity Δ2 (zCDP,
    then its conversion to approximate DP)."""
    return float(_opendp_epsilon_map(float(sigma), float(delta)).map(float(l2_sensitivity))[0])


@lru_cache(maxsize=1024)
def sigma_for(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    """The smallest σ (to a relative 1e-9) with which Gaussian noise on statistics of L2
    sensitivity Δ2 is (ε, δ)-DP through zCDP; verified with OpenDP's map (see the module)."""
    if l2_sensitivity == 0:
        return 0.0
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(f"a Gaussian needs epsilon > 0 and 0 < delta < 1, got {epsilon}, {delta}")

    def eps_of(sigma: float) -> float:
        return zcdp_epsilon(l2_sensitivity**2 / (2 * sigma**2), delta)

    lo = hi = l2_sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    while eps_of(hi) > epsilon:
        hi *= 2
    while eps_of(lo) <= epsilon:
        lo /= 2
    while hi / lo > 1 + 1e-10:  # eps_of decreases in σ: keep hi feasible
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if eps_of(mid) <= epsilon else (mid, hi)
    step = 1e-9
    while opendp_epsilon(l2_sensitivity, hi, delta) > epsilon:  # OpenDP rounds conservatively
        hi *= 1 + step
        step *= 2
    return hi


# -- accuracy ---------------------------------------------------------------------------------------
@lru_cache(maxsize=256)
def _tail_table(sigma: float) -> np.ndarray:
    """tail[k] = P(|X| > k) for k = 0..K, X ~ N_Z(0, σ²), summed from the pmf (σ small)."""
    top = int(math.ceil(40 * sigma)) + 2
    w = np.exp(-(np.arange(top + 1, dtype=np.float64) ** 2) / (2 * sigma**2))
    total = w[0] + 2 * w[1:].sum()
    beyond = 2 * (np.cumsum(w[::-1])[::-1] - w)  # 2 Σ_{j>k} w_j
    return np.clip(beyond / total, 0.0, 1.0)


def discrete_gaussian_tail(sigma: float, k: int) -> float:
    """P(|X| > k) for X ~ N_Z(0, σ²), k >= 0 (see the module for σ > 2^12)."""
    if sigma <= 0:
        return 0.0
    if sigma <= EXACT_TAIL_MAX_SIGMA:
        table = _tail_table(float(sigma))
        return float(table[k]) if k < len(table) else 0.0
    return math.erfc((k + 0.5) / (sigma * math.sqrt(2)))


def discrete_gaussian_half_width(sigma: float, confidence: float = 0.95) -> int:
    """Smallest integer k with P(|X| <= k) >= confidence, X ~ N_Z(0, σ²)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if sigma <= 0:
        return 0
    alpha = 1.0 - confidence
    if sigma <= EXACT_TAIL_MAX_SIGMA:
        table = _tail_table(float(sigma))
        return int(np.argmax(table <= alpha))
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - alpha / 2)
    return int(math.ceil(z * sigma - 0.5)) + 1


# -- the mechanism -------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class DiscreteGaussian(Mechanism):
    """Integer statistics + i.i.d. discrete Gaussian noise N_Z(0, σ²).

    Privacy claim: if one unit changes the vector of integer statistics by at most
    `sensitivity` = Δ2 in L2 norm, the release is ρ-zCDP with ρ = Δ2²/(2σ²) (Canonne, Kamath,
    Steinke 2020, Thm 14) and hence (ε, δ)-DP, σ = `sigma_for(Δ2, ε, δ)` the smallest scale
    whose zCDP → approximate-DP conversion (OpenDP's) gives ε at δ. A DP SQL count or sum over
    partitions, where a unit touches at most C_u partitions and moves each by at most Δ, has
    Δ2 = √C_u·Δ (against C_u·Δ in L1 for Laplace).
    """

    KIND: ClassVar[MechanismKind] = MechanismKind.DISCRETE_GAUSSIAN
    sensitivity: float  # L2
    epsilon: float
    delta: float

    def __post_init__(self):
        _check_sensitivity(self.sensitivity)
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"a Gaussian needs a finite epsilon > 0, got {self.epsilon}")
        if not 0 < self.delta < 1:
            raise ValueError(f"a Gaussian needs 0 < delta < 1, got {self.delta}")

    @property
    def cost(self) -> Cost:
        return Cost(self.epsilon, self.delta)

    @property
    def scale(self) -> float:
        """σ, the noise's standard deviation parameter (integer units)."""
        return sigma_for(float(self.sensitivity), float(self.epsilon), float(self.delta))

    @property
    def rho(self) -> float:
        return 0.0 if self.scale == 0 else float(self.sensitivity) ** 2 / (2 * self.scale**2)

    def loss(self) -> PrivacyLoss:
        """ρ-zCDP with ρ = Δ2²/(2σ²), stating its (ε, δ) claim beside (an accountant composes
        the ρ of Gaussians in zCDP, `core.privacy.accounting`)."""
        return PrivacyLoss(
            LossKind.GAUSSIAN, self.epsilon, self.delta, float(self.sensitivity), self.scale
        )

    def draw(self, accountant: Accountant, values) -> np.ndarray:
        """`values` (integers) plus discrete Gaussian noise; int64 array of the same shape."""
        arr = np.asarray(values)
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{self.label}: discrete Gaussian adds to integers, got {arr.dtype}")
        with accountant.drawing(self) as noise:
            z = noise.discrete_gaussian(self.scale, size=arr.shape)
        return arr.astype(np.int64) + z

    def half_width(self, confidence: float = 0.95) -> int:
        """Smallest integer k with P(|noise| <= k) >= confidence (the Gaussian's quantile)."""
        return discrete_gaussian_half_width(self.scale, confidence)

    def tail(self, k: int) -> float:
        """P(|noise| > k)."""
        return discrete_gaussian_tail(self.scale, k)
