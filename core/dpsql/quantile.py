"""Exponential-mechanism quantiles on a public grid (spec §2.7; Smith 2011).

Score of candidate c: |(1 - p)·#{x < c} - p·#{x > c}|, lower is better; one unit adds or
removes up to k values, so the score moves by at most k·max(p, 1 - p). Secure mode runs OpenDP's
`make_private_quantile` (the same score) at the scale the mechanism object states; seeded mode
samples the same distribution with Gumbel-max from `Noise.uniform`, for reproducible demos.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from core.privacy import Accountant, Exponential, Overdraw


def grid(lower: float, upper: float, size: int) -> np.ndarray:
    return np.linspace(lower, upper, size) if upper > lower else np.array([float(lower)])


def scores(values: np.ndarray, candidates: np.ndarray, p: float) -> np.ndarray:
    v = np.sort(np.asarray(values, dtype=float))
    below = np.searchsorted(v, candidates, side="left")
    above = v.size - np.searchsorted(v, candidates, side="right")
    return np.abs((1 - p) * below - p * above)


@lru_cache(maxsize=256)
def score_sensitivity(p: float, max_values: int) -> float:
    """What one unit's <= k values move a partition's score: k·max(p, 1 - p), raised to what
    OpenDP's own accounting needs (it represents p as a fraction; for p = 1/3 its privacy map
    charges 1.00005 ε at the textbook scale). Public: depends on (p, k) only."""
    base = max_values * max(p, 1 - p)
    if base == 0:
        return 0.0
    charged = _opendp_measure((0.0, 1.0), float(p), 2.0 * base).map(max_values)  # at ε = 1
    return base * max(1.0, float(charged))


@lru_cache(maxsize=64)  # bounded: grids of up to 10,001 points per entry
def _opendp_measure(candidates: tuple, p: float, scale: float):
    from core.privacy.noise import _opendp

    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    return dp.m.make_private_quantile(
        domain, dp.symmetric_distance(), dp.max_divergence(), list(candidates), p, scale
    )


def private_quantiles(
    mechanism: Exponential,
    accountant: Accountant,
    partitions: list,
    lower: float,
    upper: float,
    p: float,
    max_values: int,
    grid_size: int,
) -> np.ndarray:
    """One DP quantile of clamped values per partition; always a grid point.

    Privacy claim: the exponential mechanism over the public grid with the score of the module
    docstring, at the scale `mechanism` states (2·Δu/(ε_i/C_u) per partition, Δu =
    `score_sensitivity(p, k)`); the partitions are disjoint, so the one object drawn in each
    costs ε_i once. Secure mode draws with OpenDP's `make_private_quantile` at that same scale
    (its privacy map must agree), seeded mode by Gumbel-max from `Noise.uniform`."""
    candidates = grid(lower, upper, grid_size)
    out = np.empty(len(partitions), dtype=float)
    with accountant.drawing(mechanism) as noise:  # recorded even when no partition survives
        secure = noise.is_secure
    if secure:
        meas = _opendp_measure(tuple(float(c) for c in candidates), float(p), mechanism.scale)
        per_partition = 2.0 * score_sensitivity(p, max_values) / mechanism.scale  # ε_i / C_u
        if meas.map(max_values) > per_partition * (1 + 1e-9):  # OpenDP's accounting must agree
            raise Overdraw(f"{mechanism.label}: OpenDP charges more than the stated scale allows")
    for r, vals in enumerate(partitions):
        values = np.clip(np.asarray(vals if vals is not None else [], dtype=float), lower, upper)
        if secure:
            with accountant.drawing(mechanism):
                out[r] = float(meas([float(x) for x in values]))
        else:
            out[r] = candidates[mechanism.draw(accountant, -scores(values, candidates, p))]
    return out
