"""DAWA, the data- and workload-aware algorithm of Li, Hay, Miklau, Wang (PVLDB 2014), in 2-D
through the Hilbert curve, as a labelled baseline — with a partition step whose privacy we can
prove (the paper's is not ε1-DP as published; see below and docs/benchmarks/htf.md).

1. **Order.** The grid's cells are laid out along the Hilbert curve (`hilbert.py`), a 1-D
   domain whose aligned dyadic runs (lengths 2^l) are squares and 2:1 rectangles of the grid.
2. **Partition (ε1 = `ratio` x ε).** DAWA's idea: a bucket should be split when the error of
   spreading its total evenly — the L1 deviation of its counts — exceeds the noise an extra
   bucket costs (K / ε2 per bucket count). The paper finds the least-cost partition from noisy
   interval costs (Laplace, costs below the count noise floored to it) by dynamic programming;
   that step is not ε1-DP: a unit changes the costs of all ~log n intervals holding it, and the
   floor breaks the noisy-minimum argument — an attacker's test on a 4-cell domain
   (bench/peers_dawa_privacy.py) measures a log-ratio of 1.6 at ε1 = 1 for the paper's noise.
   Here the buckets are still dyadic runs chosen by their L1 deviation, but top-down with
   PrivTree's biased-score rule (Zhang, Xiao, Xie, SIGMOD 2016): a run is split while
   max(dev(run) - depth δ, θ - δ) + Laplace(λ) > θ, with θ = K / ε2 (DAWA's bucket cost),
   λ = K (2β - 1) / ((β - 1) ε1), δ = λ ln β, β = 2 (binary runs). dev is the L1 deviation
   from the run's median (the least L1 deviation from any constant, between 1/2 and 1 times
   DAWA's deviation from the mean): it moves by at most 1 per point and never grows from a run
   to a sub-run — the two properties PrivTree's theorem needs — so the whole partition is
   ε1-DP for points, and for a person with at most K points by group privacy (λ, δ times K).
3. **Counts (ε2 = ε - ε1).** `allocation="flat"` (default, DAWA's uniform option): each
   bucket's count + discrete Laplace(K / ε2) over the disjoint buckets. `"hierarchy"`: an HB
   tree over the bucket sequence (branching from HB's 1-D analysis), ε2 split evenly over its
   levels, least squares (`hb.measure_hierarchy`) — the role of the paper's GreedyH for range
   workloads, without tuning weights to a workload.
4. **Expansion.** Each bucket's estimate is spread evenly over its cells (the release's leaves
   are the buckets' rectangles).

Total: ε1 + ε2 = ε (sequential composition).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, Laplace
from core.spatial.baselines.hb import Hierarchy, branching_1d, measure_hierarchy, nested_edges
from core.spatial.baselines.hilbert import HilbertLayout
from core.spatial.baselines.inputs import check_epsilon, check_fraction, check_matrix, require
from core.spatial.common import count_mechanism
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

METHOD = "dawa"
PARTITION_SHARE = 0.5  # ε1 / ε (the paper uses 0.25 for its own partition step; see docs)
BETA = 2.0  # PrivTree's decay base for binary runs
ALLOCATIONS = ("flat", "hierarchy")


@dataclass(frozen=True)
class RunStats:
    """Per level l = 0..2k of the binary tree of aligned runs of length 2^l along the curve:
    `cells[l]` in-grid cells of each run, `dev[l]` the L1 deviation of its counts from their
    median (0 for a run without in-grid cells)."""

    cells: list[np.ndarray]
    dev: list[np.ndarray]


def run_stats(x: np.ndarray, inside: np.ndarray) -> RunStats:
    """Exact cells and median L1 deviation of every aligned run (vectorised per level)."""
    x = np.asarray(x, dtype=np.float64)
    inside = np.asarray(inside, dtype=bool)
    masked = not inside.all()
    xm = np.where(inside, x, np.nan) if masked else x
    cells, dev = [], []
    length = 1
    while length <= len(x):
        X = xm.reshape(-1, length)
        c = inside.reshape(-1, length).sum(axis=1)
        if masked:
            with np.errstate(all="ignore"):
                med = np.nanmedian(np.where(c[:, None] > 0, X, 0.0), axis=1)
            d = np.nansum(np.abs(X - med[:, None]), axis=1)
        else:
            med = np.median(X, axis=1)
            d = np.abs(X - med[:, None]).sum(axis=1)
        cells.append(c.astype(np.int64))
        dev.append(np.where(c > 0, d, 0.0))
        length *= 2
    return RunStats(cells, dev)


def privtree_constants(eps1: float, k: int, beta: float = BETA) -> tuple[float, float, float]:
    """(effective sensitivity K (2β-1)/(β-1), λ = that / ε1, δ = λ ln β) of PrivTree's rule."""
    sens = k * (2 * beta - 1) / (beta - 1)
    lam = sens / eps1
    return sens, lam, lam * math.log(beta)


def split_runs(
    stats: RunStats, theta: float, delta: float, mech: Laplace, accountant: Accountant
) -> tuple[np.ndarray, np.ndarray]:
    """(start, level) of the buckets, sorted along the curve: top-down from the whole curve, a
    run with in-grid cells is split while max(dev - depth δ, θ - δ) + noise > θ (noise drawn by
    `mech`, the same object at every depth); single cells and unsplit runs are buckets."""
    top = len(stats.cells) - 1
    starts, levels = [], []
    frontier = np.zeros(1, dtype=np.int64)  # indices of the runs to decide at this level
    for level in range(top, -1, -1):
        frontier = frontier[stats.cells[level][frontier] > 0]
        if level == 0 or not len(frontier):
            keep = frontier
            split = frontier[:0]
        else:
            depth = top - level
            biased = np.maximum(stats.dev[level][frontier] - depth * delta, theta - delta)
            goes = mech.draw(accountant, biased) > theta
            keep, split = frontier[~goes], frontier[goes]
        starts.append(keep << level)
        levels.append(np.full(len(keep), level, dtype=np.int64))
        frontier = np.concatenate([2 * split, 2 * split + 1])
    start = np.concatenate(starts).astype(np.int64)
    level = np.concatenate(levels)
    order = np.argsort(start, kind="stable")
    return start[order], level[order]


def bucket_counts(x: np.ndarray, start: np.ndarray, level: np.ndarray) -> np.ndarray:
    """True count of each bucket [start, start + 2^level) along the curve."""
    csum = np.concatenate([[0], np.cumsum(np.asarray(x, dtype=np.int64))])
    return csum[start + np.left_shift(1, level)] - csum[start]


def build_dawa(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    *,
    unit: Unit = POINT,
    ratio: float = PARTITION_SHARE,
    allocation: str = "flat",
) -> Release:
    """DAWA on the grid's Hilbert order; leaves are the buckets (squares and 2:1 rectangles).

    Privacy (unit: a point, or a person with at most K points): ε1 = ratio x eps_tot on the
    partition (one `Laplace` mechanism for the whole run tree, stated with PrivTree's effective
    sensitivity K (2β-1)/(β-1), so its scale is λ; the theorem, not parallel composition, makes
    all its draws together ε1-DP), ε2 = the rest on the bucket counts (`DiscreteLaplace`, L1
    sensitivity K: one mechanism over the disjoint buckets, or one per level of the hierarchy
    over them with ε2 / h each) — eps_tot in total.
    """
    F = check_matrix(F)
    check_epsilon(eps_tot)
    check_fraction("ratio", ratio)
    if allocation not in ALLOCATIONS:
        raise InputError(f"allocation must be one of {', '.join(ALLOCATIONS)}, got {allocation!r}.")
    require(accountant, METHOD, eps_tot)
    ny, nx = F.shape
    layout = HilbertLayout.for_grid(ny, nx)
    # a single cell has nothing to partition: all of eps_tot goes to its count
    eps1 = ratio * eps_tot if layout.length > 1 else 0.0
    eps2 = eps_tot - eps1
    k = unit.max_points
    sens, lam, delta = privtree_constants(eps1, k) if eps1 > 0 else (k * 3.0, 0.0, 0.0)
    x = layout.to_curve(F)
    stats = run_stats(x, layout.inside)
    if eps1 > 0:
        partition = Laplace(
            f"{METHOD}: biased L1 deviations of the Hilbert runs steering the splits "
            "(PrivTree theorem, whole run tree)",
            sensitivity=sens,
            epsilon=eps1,
        )
        start, level = split_runs(stats, k / eps2, delta, partition, accountant)
    else:
        start, level = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    counts = bucket_counts(x, start, level)
    m = len(counts)
    if allocation == "flat":
        mech = count_mechanism(f"{METHOD}: bucket counts (disjoint buckets)", eps2, unit)
        values = mech.draw(accountant, counts).astype(np.float64)
        shape, scales = {"buckets": m}, [mech.scale]
    else:
        b, h = branching_1d(m)
        tree = Hierarchy([np.array([0, 1])] * (h + 1), nested_edges(m, b, h))
        values, scales = measure_hierarchy(
            counts[None, :], tree, eps2, accountant, unit, f"{METHOD}: bucket hierarchy"
        )
        shape = {"buckets": m, "branching": b, "height": h}
    return Release(
        method=METHOD,
        leaves=layout.run_rects(start, level),
        values=values,
        epsilon={"total": eps_tot, "partition": eps1, "counts": eps2},
        mechanisms=accountant.mechanisms,
        unit=unit,
        params={"eps_tot": eps_tot, "ratio": ratio, "allocation": allocation},
        info={
            "label": "DAWA (Li et al. 2014, baseline; Hilbert order, PrivTree-style partition)",
            **shape,
            "partition_noise_scale": lam,
            "partition_bias_per_level": delta,
            "count_noise_scale": scales[0],
        },
    )
