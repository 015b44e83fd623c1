"""tau-thresholding of partitions (Wilson Theorem 12; spec §2.8).

`tau` is Wilson's continuous-Laplace threshold and `zetasql_threshold` ZetaSQL's ceil(tau),
kept for compatibility. The engine noises the integer unit count with *discrete* Laplace, whose
tail is heavier at integers, so it applies `engine_threshold`: the smallest integer T with
P(1 + Z >= T) <= delta_adj for the noise actually sampled (T >= ceil(tau) always).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def _check(epsilon: float, delta: float, max_groups: int) -> None:
    if not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon}")
    if isinstance(max_groups, bool) or not isinstance(max_groups, int) or max_groups < 1:
        raise ValueError(f"max_groups_contributed must be an integer >= 1, got {max_groups}")
    if not isinstance(delta, (int, float)) or math.isnan(delta) or not 0 <= delta <= 1:
        raise ValueError(f"delta must be in [0, 1], got {delta}")


def delta_per_partition(delta: float, max_groups: int) -> float:
    """delta_adj = 1 - (1 - delta)^(1/C_u), computed without cancellation."""
    if delta >= 1:
        return 1.0
    return -math.expm1(math.log1p(-delta) / max_groups)


def tau(epsilon: float, delta: float, max_groups: int = 1) -> float:
    """Wilson's threshold for a Laplace(C_u/epsilon) unit count (may be negative or ±inf)."""
    _check(epsilon, delta, max_groups)
    if delta == 0:
        return math.inf
    if delta == 1:
        return -math.inf
    b = max_groups / epsilon
    d = delta_per_partition(delta, max_groups)
    if d <= 0.5:
        return 1.0 - b * math.log(2.0 * d)
    return 1.0 + b * math.log(2.0 * (1.0 - d))


def zetasql_threshold(epsilon: float, delta: float, max_groups: int = 1) -> int:
    """ZetaSQL's integer threshold ceil(tau); int64 max for delta = 0, int64 min for delta = 1."""
    t = tau(epsilon, delta, max_groups)
    if t == math.inf:
        return INT64_MAX
    if t == -math.inf:
        return INT64_MIN
    return math.ceil(t)


def single_unit_release_probability(threshold: int, scale: float) -> float:
    """P(1 + Z >= T) for Z discrete Laplace(scale): a one-unit partition passes threshold T."""
    return keep_probability(1, threshold, scale)


def keep_probability(n: int, threshold: int, scale: float) -> float:
    """P(n + Z >= T) with P(Z >= t) = q^t/(1+q) for t >= 1, q = exp(-1/scale)."""
    q = math.exp(-1.0 / scale)
    t = threshold - n
    if t >= 1:
        return math.exp(t * (-1.0 / scale) - math.log1p(q))
    return -math.expm1((1 - t) * (-1.0 / scale) - math.log1p(q))


def keep_probability_continuous(n: float, threshold: float, scale: float) -> float:
    """Teaching approximation with continuous Laplace noise."""
    if n <= threshold:
        return 0.5 * math.exp(-(threshold - n) / scale)
    return 1.0 - 0.5 * math.exp(-(n - threshold) / scale)


def engine_threshold(epsilon: float, delta: float, max_groups: int = 1) -> int:
    """Smallest integer T with P(1 + Z >= T) <= delta_adj, Z ~ discrete Laplace(C_u/epsilon)."""
    _check(epsilon, delta, max_groups)
    if delta == 0:
        raise ValueError("delta = 0: no threshold can bound the release of a one-unit partition")
    if delta == 1:
        return INT64_MIN
    b = max_groups / epsilon
    q = math.exp(-1.0 / b)
    d = delta_per_partition(delta, max_groups)
    t = math.ceil(1.0 - b * math.log((1.0 + q) * d))
    if t <= 1:
        t = math.ceil(2.0 + b * math.log((1.0 - d) * (1.0 + q)))
    for _ in range(10_000):  # the closed form is off by at most one step; verify exactly
        if single_unit_release_probability(t, b) > d:
            t += 1
        elif single_unit_release_probability(t - 1, b) <= d:
            t -= 1
        else:
            return t
    raise RuntimeError("threshold search did not converge")


def realised_delta(threshold: int, epsilon: float, max_groups: int) -> float:
    """1 - (1 - p(T))^C_u: the chance that any of a new unit's C_u singleton partitions shows."""
    p = single_unit_release_probability(threshold, max_groups / epsilon)
    return -math.expm1(max_groups * math.log1p(-p)) if p < 1 else 1.0


def survival_curve(threshold: int, scale: float, units: list[int]) -> list[dict]:
    """P(partition kept | n units) under the engine's discrete noise, with the continuous view."""
    return [
        {
            "units": int(n),
            "keep_probability": keep_probability(int(n), threshold, scale),
            "keep_probability_continuous": keep_probability_continuous(n, threshold, scale),
        }
        for n in units
    ]


def opendp_threshold_delta(threshold: int, scale: float, max_groups: int) -> float:
    """Cross-check (spec §2.8): delta' of OpenDP's make_laplace_threshold with the same scale and
    threshold at d_in = (C_u, C_u, 1); the ledger reports the larger of this and our own."""
    from core.privacy.noise import _opendp

    dp = _opendp()
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T="i64"))
    metric = dp.l01inf_distance(dp.absolute_distance(T="i64"))
    meas = dp.m.make_laplace_threshold(domain, metric, scale=float(scale), threshold=int(threshold))
    return float(meas.map((max_groups, max_groups, 1))[1])


@dataclass(frozen=True)
class ThresholdInfo:
    """What partition selection states, for display: Wilson's tau, the integer T applied to
    the noisy unit count (before the pre-threshold shift), ε_τ, the noise scale, δ and the
    realised δ (the larger of ours and OpenDP's accounting)."""

    tau: float
    integer: int
    epsilon: float
    scale: float
    delta: float
    realised_delta: float


def threshold_info(scale: float, eps_tau: float, delta: float, cu: int) -> ThresholdInfo:
    """tau, T and the realised delta of partition selection (`Plan.threshold_info`).

    Privacy claim: the unit count is noised with discrete Laplace of scale b = C_u/ε_τ, taken
    from the `NoisyThreshold` object itself (the object that selects partitions and is
    charged); T is the smallest integer with P(1 + Z >= T) <= δ_adj, so a partition that exists
    only because of one unit is released with probability <= δ over its C_u partitions."""
    t = engine_threshold(eps_tau, delta, cu)
    own = realised_delta(t, eps_tau, cu)
    try:
        cross = opendp_threshold_delta(t, scale, cu)
    except Exception:  # OpenDP rejects extreme parameters (e.g. T beyond i64); ours stands
        cross = 0.0
    return ThresholdInfo(tau(eps_tau, delta, cu), t, eps_tau, scale, delta, max(own, cross))
