"""The noisy features Recommended (`auto`, core/spatial/selection.py) chooses a method from.

Round 6 (issue 20). A noisy N first; then the shape, with a share of epsilon set by that noisy N
alone (post-processing of a released value), so the total is always epsilon and what is spent
never depends on the data beyond the noisy N:

1. a noisy N (Laplace, sensitivity K), the same N that UG and AG size their grids with;
2. below `VERY_LOW_SIGNAL` points per unit of noise: nothing more. The rules build UG there
   whatever the shape (no adaptive structure beats the plain grid at that signal on the
   benchmark's 20-repetition runs, and the 4 x 4 shape read at that noise sent spread real data
   to DAWA by coin flip), so the shape share goes to UG's cells and Recommended is UG alone;
3. from `VERY_LOW_SIGNAL` to `LOW_SIGNAL`: 4 x 4 noisy counts with the whole shape share
   (`SHAPE_SHARE`). At a few hundred points per unit of noise a 16 x 16 grid is mostly noise,
   while one compact cluster still fills one or a few of 16 cells;
4. from `LOW_SIGNAL` up: 16 x 16 noisy counts (`COARSE_SHARE`; discrete Laplace, L1 sensitivity
   K over disjoint cells) and a noisy number of occupied cells of the release's own grid
   (`CELLS_SHARE`; Laplace, sensitivity K): how many distinct places the points sit on, so N
   over it says whether the points are a few hundred point masses (airports, stations, venues,
   addresses geocoded to centroids) that a coarse grid sees as spread.

Everything here is post-processing of those draws; `measure_features` states the privacy claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.privacy import Accountant, Laplace
from core.spatial.common import N_SHARE, count_mechanism, near_equal_edges
from core.spatial.unit import POINT, Unit

# Stage 1's share: the noisy N. Equal to N_SHARE, the share UG and AG spend on their own noisy N
# (reasoning in core/spatial/common.py: typical relative error 1 / (share x N x eps), 20 % at
# N x eps = 100). Same share, same mechanism: when the rules pick UG, this N is handed on and UG
# is sized as UG alone sizes itself at eps_tot (selection.UG_C); AG reuses it too. So choosing
# UG or AG costs only the other shares against running it alone. Near the signal thresholds
# (noisy N x eps around 600-1,200) the relative error of N is sqrt(2) / (0.05 x N x eps) =
# 2-5 %, so a set is routed to the wrong side only within a few per cent of a threshold, where
# the candidates' errors are close (design data: docs/benchmarks/htf.md).
N_SELECTION_SHARE = N_SHARE
# From LOW_SIGNAL up, the 16 x 16 noisy counts: 3 % of eps, the share the compact-cluster
# thresholds (selection.COMPACT_TOP_SHARE, COMPACT_DISPERSION) were fitted with on design +
# held-out set 1 (round 2), so the features keep the noise the thresholds were set for.
COARSE_SHARE = 0.03
# From LOW_SIGNAL up, the number of occupied cells, sensitivity K. 2 %: the point-mass rule
# cannot fire below noisy N x eps of about 2,250 (see `points_per_cell`), and above it a scale of
# K / (0.02 eps) is a few per cent of any occupied-cell count that matters; at eps 1 the airline
# route ends' 321 occupied cells are measured to +-50, so their N per cell (55) reads as at
# least 35 in 97 % of draws. Below LOW_SIGNAL this share goes to the 4 x 4 counts instead.
CELLS_SHARE = 0.02
SHAPE_SHARE = COARSE_SHARE + CELLS_SHARE  # the shape's share at most (5 %)
SELECTION_SHARE = N_SELECTION_SHARE + SHAPE_SHARE  # spent on choosing at most (10 %)
# The bands are read on the signal at the full selection share, noisy N x (1 - SELECTION_SHARE)
# x eps / K (0.95 instead of 0.9 with a declared public N): the scale every threshold was
# fitted in. Below VERY_LOW_SIGNAL the shape is not measured (the rules build UG whatever it is;
# the threshold's reasoning is in selection.py, next to the rules).
VERY_LOW_SIGNAL = 330
# The upper band boundary. Below it, on the benchmark's 20-repetition runs, the 16 x 16 features
# were noise: spread real sets and a compact Gaussian gave the same densest-1/16 share
# (0.32-0.51), and the picks followed the noise stream, not the data (docs/benchmarks/htf.md,
# round 5).
LOW_SIGNAL = 1200
COARSE = 16  # the coarse grid from LOW_SIGNAL up (at most 16 x 16 cells)
LOW_COARSE = 4  # the coarse grid below LOW_SIGNAL (at most 4 x 4 cells)
TOP_FRACTION = 1 / 16  # "top cells" = the densest 1/16 of the coarse cells (16 of 256)
QUARTER = 1 / 4  # the densest quarter of the coarse cells (4 of 16 on the 4 x 4 grid)
# A coarse cell is "clearly non-empty" above CLEAR_SCALES noise scales (plus 1 % of the mean
# cell): at 5 scales a cell holding nothing passes in e^-5 / 2 = 0.3 % of draws (under one of
# 256 cells), where round 4's 3 scales let about six pass; those far-off noise cells pushed a
# compact cluster's dispersion over the compact threshold in 4 of 20 repetitions (held-out set
# 3's Gaussian at eps 1, built as AG 3.7x behind DAWA; docs/benchmarks/htf.md, round 5).
CLEAR_SCALES = 5.0
# How many noise scales the occupied-cell count is raised by before N is divided by it: the
# conservative N per cell errs towards "spread" (Laplace: the count exceeds noisy + 3 scales in
# e^-3 / 2 = 2.5 % of draws).
CELLS_MARGIN = 3.0


@dataclass(frozen=True)
class Features:
    """Noisy, public-safe features (post-processing of the Laplace measurements).

    `noisy_n`: N + Laplace(K / eps_n), or the declared public size. `signal`: noisy_n x
    (1 - SELECTION_SHARE) x eps / K (0.95 eps with a declared N), the points per unit of
    count-noise scale at the full selection share (K: the unit's point bound): the scale the
    bands and thresholds are read in. The chosen method gets at least that share, more when the
    shape costs less. Below VERY_LOW_SIGNAL no shape is measured and every shape feature is
    None. The coarse grid is 4 x 4 below LOW_SIGNAL, 16 x 16 from it. `top_share` /
    `top_quarter`: share of the noisy coarse mass (negatives clipped to 0) held by the densest
    1/16 / 1/4 of the coarse cells. `occupied`: fraction of coarse cells whose noisy count
    exceeds CLEAR_SCALES noise scales plus 1 % of the noisy mean cell count (clearly
    non-empty). `dispersion`: over those clearly non-empty cells, weighted by their noisy count
    above that threshold, the RMS distance from their centre of mass as a fraction of the
    coarse grid's side (16 x 16, on the benchmark grid: 0.03-0.14 for one cluster, 0.15-0.17
    for taxi ends around one hub, 0.20-0.43 for several clusters or spread real data; 0 when at
    most one cell is clearly non-empty).
    `noisy_cells` (from LOW_SIGNAL up; None below): the number of non-empty cells of the
    release's grid + Laplace(K / eps_d). `points_per_cell` (likewise): noisy_n / (noisy_cells +
    3 scales), a conservative points-per-occupied-cell (1-6 for cities, airports, tracks and
    check-ins; 55 for airline route ends, whose points sit on 321 airports).
    """

    noisy_n: float
    signal: float
    top_share: float | None
    top_quarter: float | None
    occupied: float | None
    dispersion: float | None
    noisy_cells: float | None
    points_per_cell: float | None


def shape_shares(signal: float, coarse_share: float, cells_share: float) -> tuple[float, float]:
    """(share of eps for the coarse counts, share for the occupied cells) at this signal
    (post-processing of the noisy N). Below VERY_LOW_SIGNAL nothing; below LOW_SIGNAL the whole
    shape share on the 4 x 4 counts; from LOW_SIGNAL up each its own share.

    Not shrunk at high signal, although the features are shares and ratios: `top_share` is a
    share of the clipped noisy mass, whose noise in the empty cells moves it (a Gaussian of
    sigma 1.9 coarse cells read 0.65 at the full share and 0.49 at a ninth of it), so the
    compact-cluster thresholds hold only at the noise they were fitted with (round 6 tried
    shares shrinking above a signal of 9,600 and dropped it: docs/benchmarks/htf.md)."""
    if signal < VERY_LOW_SIGNAL:
        return 0.0, 0.0
    if signal < LOW_SIGNAL:
        return coarse_share + cells_share, 0.0
    return coarse_share, cells_share


def coarse_counts(F: np.ndarray, coarse: int = COARSE) -> np.ndarray:
    """True counts on a near-equal coarse partition (at most `coarse` x `coarse`) of F's grid."""
    ny, nx = F.shape
    re = near_equal_edges(ny, min(coarse, ny))
    ce = near_equal_edges(nx, min(coarse, nx))
    rows = np.add.reduceat(np.asarray(F, dtype=np.int64), re[:-1], axis=0)
    return np.add.reduceat(rows, ce[:-1], axis=1)


def dispersion(noisy: np.ndarray, thresh: float) -> float:
    """RMS distance of the cells above `thresh` from their centre of mass (weights: noisy count
    minus thresh), as a fraction of the longer side of the coarse grid. Post-processing only."""
    w = np.clip(np.asarray(noisy, dtype=np.float64) - thresh, 0.0, None)
    total = w.sum()
    if total <= 0:
        return 0.0
    r, c = np.indices(w.shape)
    cr, cc = (w * r).sum() / total, (w * c).sum() / total
    rms = math.sqrt(float((w * ((r - cr) ** 2 + (c - cc) ** 2)).sum() / total))
    return rms / max(w.shape)


def points_per_cell(noisy_n: float, noisy_cells: float, cells_scale: float) -> float:
    """Conservative points per occupied cell: noisy N over the occupied-cell count raised by
    CELLS_MARGIN noise scales (post-processing). It is below N / cells in about 97 % of draws,
    and at most noisy N / (3 scales) = noisy N x 0.02 eps_tot / (3K): with N x eps_tot / K below
    about 2,250 it cannot reach the point-mass threshold (selection.POINT_MASSES, 15), whatever
    the data."""
    return max(noisy_n, 0.0) / (max(noisy_cells, 0.0) + CELLS_MARGIN * cells_scale)


@dataclass(frozen=True)
class Measured:
    """What the measurements gave: features, the noisy coarse counts, each measurement's noise
    scale, and the epsilon they spent."""

    features: Features
    coarse: np.ndarray
    noise_scales: dict[str, float]
    epsilon: float


def _top(pos: np.ndarray, fraction: float) -> float:
    """Share of the clipped noisy mass held by the densest `fraction` of the cells."""
    top_k = max(1, round(fraction * pos.size))
    mass = pos.sum()
    return float(np.sort(pos)[::-1][:top_k].sum() / mass) if mass > 0 else 0.0


def measure_features(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    unit: Unit = POINT,
    *,
    public_n: float | None = None,
    n_share: float = N_SELECTION_SHARE,
    coarse_share: float = COARSE_SHARE,
    cells_share: float = CELLS_SHARE,
) -> Measured:
    """Stage 1 (noisy N), then the shape by `shape_shares`: nothing below VERY_LOW_SIGNAL, 4 x 4
    noisy counts below LOW_SIGNAL, 16 x 16 noisy counts and the noisy number of occupied cells
    from it.

    Privacy (unit: a point, or a person with at most K points; add/remove neighbours): N has
    sensitivity K and gets Laplace(K / eps_n) with eps_n = n_share x eps_tot (a `Laplace`
    mechanism; none with a declared `public_n`, eps_n = 0). The shape's shares are a function of
    the noisy N (or of the public size) only, so they are post-processing of a released value:
    adaptive sequential composition, and the caller builds the chosen method with eps_tot minus
    what is spent here, so the release is eps_tot-DP whatever the band. The 4 x 4 or 16 x 16
    cells are disjoint, so their counts have L1 sensitivity K and get discrete Laplace(K / eps_c)
    per cell (a `DiscreteLaplace` mechanism, parallel composition over the cells); adding or
    removing one unit's at most K points makes at most K cells of F's grid empty or non-empty,
    so the number of non-empty cells has sensitivity K and gets Laplace(K / eps_d) (a `Laplace`
    mechanism). Spent: eps_n + eps_c + eps_d.
    """
    k = unit.max_points
    F = np.asarray(F)
    if public_n is None:
        eps_n = n_share * eps_tot
        n_mech = Laplace("auto: noisy N (method choice)", sensitivity=k, epsilon=eps_n)
        n_hat = float(n_mech.draw(accountant, float(F.sum())))
        scales = {"n": n_mech.scale}
    else:
        eps_n, n_hat, scales = 0.0, float(public_n), {}
    full_shape = (coarse_share + cells_share) * eps_tot
    signal = max(n_hat, 0.0) * (eps_tot - eps_n - full_shape) / k
    c_share, d_share = shape_shares(signal, coarse_share, cells_share)
    if c_share == 0.0:  # below VERY_LOW_SIGNAL: UG whatever the shape, nothing more measured
        empty = np.zeros((0, 0))
        feats = Features(n_hat, signal, None, None, None, None, None, None)
        return Measured(feats, empty, scales, eps_n)
    coarse = count_mechanism("auto: noisy coarse counts (method choice)", c_share * eps_tot, unit)
    low = signal < LOW_SIGNAL
    noisy = coarse.draw(accountant, coarse_counts(F, LOW_COARSE if low else COARSE))
    noisy = noisy.astype(np.float64)
    scales["coarse_counts"] = coarse.scale
    noisy_cells = per_cell = None
    if d_share > 0:
        cells_mech = Laplace(
            "auto: noisy number of occupied cells (method choice)",
            sensitivity=k,
            epsilon=d_share * eps_tot,
        )
        noisy_cells = float(cells_mech.draw(accountant, float(np.count_nonzero(F))))
        per_cell = points_per_cell(n_hat, noisy_cells, cells_mech.scale)
        scales["occupied_cells"] = cells_mech.scale
    flat = noisy.reshape(-1)
    pos = np.clip(flat, 0.0, None)
    thresh = CLEAR_SCALES * coarse.scale + 0.01 * max(n_hat, 0.0) / pos.size
    feats = Features(
        noisy_n=n_hat,
        signal=signal,
        top_share=_top(pos, TOP_FRACTION),
        top_quarter=_top(pos, QUARTER),
        occupied=float(np.mean(flat > thresh)),
        dispersion=dispersion(noisy, thresh),
        noisy_cells=noisy_cells,
        points_per_cell=per_cell,
    )
    return Measured(feats, noisy, scales, eps_n + (c_share + d_share) * eps_tot)
