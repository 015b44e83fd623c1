"""Exponential-mechanism quantiles on a public grid (spec §2.7; Smith 2011).

Score of candidate c: |(1 - p)·#{x < c} - p·#{x > c}|, lower is better; one unit adds or
removes up to k values, so the score moves by at most k·max(p, 1 - p). Secure mode runs OpenDP's
`make_private_quantile` (the same score) with the scale its privacy map requires; seeded mode
samples the same distribution with Gumbel-max from `Noise.uniform`, for reproducible demos.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from core.privacy import Noise


def grid(lower: float, upper: float, size: int) -> np.ndarray:
    return np.linspace(lower, upper, size) if upper > lower else np.array([float(lower)])


def scores(values: np.ndarray, candidates: np.ndarray, p: float) -> np.ndarray:
    v = np.sort(np.asarray(values, dtype=float))
    below = np.searchsorted(v, candidates, side="left")
    above = v.size - np.searchsorted(v, candidates, side="right")
    return np.abs((1 - p) * below - p * above)


def scale_for(epsilon: float, p: float, max_values: int) -> float:
    """Exponential-mechanism scale so that a unit's <= k values cost `epsilon`."""
    return 2.0 * max_values * max(p, 1 - p) / epsilon


@lru_cache(maxsize=64)  # bounded: grids of up to 10,001 points per entry
def _opendp_measure(candidates: tuple, p: float, scale: float):
    from core.privacy.noise import _opendp

    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    return dp.m.make_private_quantile(
        domain, dp.symmetric_distance(), dp.max_divergence(), list(candidates), p, scale
    )


def private_quantile(
    values,
    lower: float,
    upper: float,
    p: float,
    epsilon: float,
    max_values: int,
    grid_size: int,
    noise: Noise,
) -> float:
    """One DP quantile of clamped `values`; always a grid point.

    Privacy claim: exponential mechanism over the public grid with score sensitivity
    k·max(p, 1 - p) (a unit adds or removes at most k = `max_values` values), so the draw is
    `epsilon`-DP for this partition; the caller passes ε_i / C_u per partition."""
    candidates = grid(lower, upper, grid_size)
    scale = scale_for(epsilon, p, max_values)
    values = np.clip(np.asarray(values, dtype=float), lower, upper)
    if noise.is_secure:
        meas = _opendp_measure(tuple(float(c) for c in candidates), float(p), float(scale))
        if meas.map(max_values) > epsilon * (1 + 1e-9):  # OpenDP's own accounting must agree
            meas = _opendp_measure(
                tuple(float(c) for c in candidates),
                float(p),
                float(scale * meas.map(max_values) / epsilon),
            )
        return float(meas([float(x) for x in values]))
    u = noise.uniform(candidates.size)
    gumbel = -np.log(-np.log(np.clip(u, 1e-300, 1 - 1e-16)))
    utility = -scores(values, candidates, p) / scale
    return float(candidates[int(np.argmax(utility + gumbel))])
