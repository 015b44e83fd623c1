"""DAWA's partition step as the paper (and ektelo) states it — EVALUATION ONLY, never a release.

Li et al. (PVLDB 2014): every interval's cost is its L1 deviation from the mean plus the
expected count noise 1/eps2, with Laplace noise of scale 2(1 - 1/|b|)/eps1 (ektelo's cutil adds
none to single cells), costs below 1/eps2 raised to it, and the least-cost partition found by
dynamic programming. Here on the aligned dyadic runs of the Hilbert order (ektelo's `approx`
variant allows any start), then flat bucket counts. Used for two things only:

* `bench/peers_ektelo.py`: how close our Hilbert + dyadic-run pipeline is to ektelo's DAWA
  when both use the paper's partition step (isolates implementation differences);
* `bench/peers_dawa_privacy.py`: an attacker's test showing that this step is not eps1-DP.

The noise here comes from a numpy Generator, outside any mechanism object, on purpose: this is
not a DP Explorer method (core/spatial/baselines/dawa.py is).
"""

from __future__ import annotations

import numpy as np

from core.spatial.baselines.dawa import bucket_counts
from core.spatial.baselines.hilbert import HilbertLayout
from core.spatial.release import Release


def mean_deviation_levels(x: np.ndarray, inside: np.ndarray) -> tuple[list, list]:
    """Per level of aligned runs: in-grid cells and L1 deviation from the mean (the paper's)."""
    x = np.asarray(x, float)
    w = np.asarray(inside, float)
    cells, dev = [], []
    length = 1
    while length <= len(x):
        X, W = x.reshape(-1, length), w.reshape(-1, length)
        c = W.sum(1)
        mean = np.divide(X.sum(1), c, out=np.zeros_like(c), where=c > 0)
        cells.append(c)
        dev.append((np.abs(X - mean[:, None]) * W).sum(1))
        length *= 2
    return cells, dev


def noisy_costs(cells, dev, eps1, eps2, rng, singles_noisy=False, scale=None):
    """The paper's floored noisy costs per level (scale: override the per-run Laplace scale)."""
    out = []
    for c, d in zip(cells, dev, strict=True):
        lam = 2 * (1 - 1 / np.maximum(c, 1)) / eps1 if scale is None else np.full(len(c), scale)
        if singles_noisy and scale is None:
            lam = np.where(c <= 1, 2 * (1 - 1 / 2) / eps1, lam)
        z = rng.laplace(size=len(c)) * lam
        out.append(np.where(c > 0, np.maximum(d + z, 0.0) + 1 / eps2, 0.0))
    return out


def min_partition(cells, cost) -> tuple[np.ndarray, np.ndarray]:
    """Exact least-cost partition into aligned runs (bottom-up DP, then top-down read-out)."""
    top = len(cost) - 1
    opt, whole = [cost[0]], [np.ones(len(cost[0]), bool)]
    for level in range(1, top + 1):
        split = opt[level - 1][0::2] + opt[level - 1][1::2]
        w = (cost[level] <= split) | (cells[level] == 0)
        whole.append(w)
        opt.append(np.where(w, cost[level], split))
    starts, levels, active = [], [], np.ones(1, bool)
    for level in range(top, -1, -1):
        keep = active & whole[level] if level else active
        chosen = np.flatnonzero(keep & (cells[level] > 0))
        starts.append(chosen << level)
        levels.append(np.full(len(chosen), level))
        if level:
            active = np.repeat(active & ~keep, 2)
    s, lv = np.concatenate(starts).astype(np.int64), np.concatenate(levels).astype(np.int64)
    order = np.argsort(s)
    return s[order], lv[order]


def build_dawa_paper(F: np.ndarray, eps: float, seed: int, ratio: float = 0.25) -> Release:
    """The paper's DAWA (flat counts) on the Hilbert order — evaluation only."""
    rng = np.random.default_rng(seed)
    lay = HilbertLayout.for_grid(*F.shape)
    x = lay.to_curve(F)
    cells, dev = mean_deviation_levels(x, lay.inside)
    eps1, eps2 = ratio * eps, (1 - ratio) * eps
    start, level = min_partition(cells, noisy_costs(cells, dev, eps1, eps2, rng))
    counts = bucket_counts(x, start, level)
    values = counts + rng.laplace(size=len(counts)) / eps2
    return Release("dawa-paper", lay.run_rects(start, level), values.astype(float), {}, ())
