"""The noisy features Recommended (`auto`, core/spatial/selection.py) chooses a method from.

Three measurements, each a mechanism of its own, all part of the release's epsilon:

1. a noisy N (Laplace, sensitivity K), the same N that UG and AG size their grids with;
2. 16 x 16 noisy counts (discrete Laplace, L1 sensitivity K over disjoint cells): where the
   mass is, at a coarse scale;
3. (round 5) a noisy number of occupied cells of the release's own grid (Laplace, sensitivity
   K): how many distinct places the points sit on, so N over it says whether the points are a
   few hundred point masses (airports, stations, venues, addresses geocoded to centroids) that a
   coarse grid sees as spread.

Everything here is post-processing of those three draws; `measure_features` states the privacy
claim.
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
# Stage 2's share: the 16 x 16 noisy counts, bought at every signal level. 3 % of eps: the share
# the round-2 rules' shape thresholds (SPREAD_TOP_SHARE, COMPACT_TOP_SHARE, COMPACT_DISPERSION)
# were fitted with on design + held-out set 1, so the features keep the noise the thresholds were
# set for.
COARSE_SHARE = 0.03
# Stage 3's share (round 5): the number of occupied cells, sensitivity K. 2 %: the point-mass
# rule needs it only where the signal is high (it cannot fire below noisy N x eps of about
# 2,250, see `points_per_cell`), and there a scale of K / (0.02 eps) is a few per cent of any
# occupied-cell count that matters; at eps 1 the airline route ends' 321 occupied cells are
# measured to +-50, so their N per cell (55) reads as at least 35 in 97 % of draws.
CELLS_SHARE = 0.02
SELECTION_SHARE = N_SELECTION_SHARE + COARSE_SHARE + CELLS_SHARE  # spent on choosing (10 %)
COARSE = 16  # coarse grid for the concentration features (at most 16 x 16 cells)
TOP_FRACTION = 1 / 16  # "top cells" = the densest 1/16 of the coarse cells (16 of 256)
# How many noise scales the occupied-cell count is raised by before N is divided by it: the
# conservative N per cell errs towards "spread" (Laplace: the count exceeds noisy + 3 scales in
# e^-3 / 2 = 2.5 % of draws).
CELLS_MARGIN = 3.0


@dataclass(frozen=True)
class Features:
    """Noisy, public-safe features (post-processing of three Laplace measurements).

    `noisy_n`: N + Laplace(K / eps_n), or the declared public size. `signal`: noisy_n x eps_build
    / K with eps_build = eps_tot - eps_sel: points per unit of count-noise scale the chosen
    method will have (K: the unit's point bound). `top_share`: share of the noisy coarse mass
    (negatives clipped to 0) held by the densest 1/16 of the coarse cells. `occupied`: fraction
    of coarse cells whose noisy count exceeds 3 noise scales (3K/eps_c) plus 1 % of the noisy mean
    cell count (i.e. clearly non-empty). `dispersion`: over those clearly non-empty cells,
    weighted by their noisy count above that threshold, the RMS distance from their centre of
    mass as a fraction of the coarse grid's side (on the benchmark grid: 0.035-0.28 for one
    cluster, above 0.2 only at low signal; 0.20-0.48 for several clusters or spread real data;
    0 when no cell is clearly non-empty). `noisy_cells`: the number of non-empty cells of the
    release's grid + Laplace(K / eps_d). `points_per_cell`: noisy_n / (noisy_cells + 3 scales),
    a conservative points-per-occupied-cell (1-2 for cities, airports and tracks; 55 for airline
    route ends, whose points sit on 321 airports).
    """

    noisy_n: float
    signal: float
    top_share: float
    occupied: float
    dispersion: float
    noisy_cells: float
    points_per_cell: float


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
    """Stage 1 (noisy N), stage 2 (16 x 16 noisy counts) and stage 3 (noisy occupied cells).

    Privacy (unit: a point, or a person with at most K points; add/remove neighbours): N has
    sensitivity K and gets Laplace(K / eps_n) with eps_n = n_share x eps_tot (a `Laplace`
    mechanism; none with a declared `public_n`, eps_n = 0). Stage 2: the coarse cells are
    disjoint, so the vector of their counts has L1 sensitivity K and gets discrete
    Laplace(K / eps_c) per cell with eps_c = coarse_share x eps_tot (a `DiscreteLaplace`
    mechanism, parallel composition over the cells). Stage 3: adding or removing one unit's at
    most K points makes at most K cells of F's grid empty or non-empty, so the number of
    non-empty cells has sensitivity K and gets Laplace(K / eps_d), eps_d = cells_share x eps_tot
    (a `Laplace` mechanism). Total: eps_n + eps_c + eps_d (sequential composition).
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
    eps_c = coarse_share * eps_tot
    eps_d = cells_share * eps_tot
    signal = max(n_hat, 0.0) * (eps_tot - eps_n - eps_c - eps_d) / k
    coarse = count_mechanism("auto: noisy coarse counts (method choice)", eps_c, unit)
    noisy = coarse.draw(accountant, coarse_counts(F)).astype(np.float64)
    cells_mech = Laplace(
        "auto: noisy number of occupied cells (method choice)", sensitivity=k, epsilon=eps_d
    )
    noisy_cells = float(cells_mech.draw(accountant, float(np.count_nonzero(F))))
    pos = np.clip(noisy.reshape(-1), 0.0, None)
    top_k = max(1, round(TOP_FRACTION * pos.size))
    mass = pos.sum()
    top = np.sort(pos)[::-1][:top_k].sum() / mass if mass > 0 else 0.0
    thresh = 3.0 * coarse.scale + 0.01 * max(n_hat, 0.0) / pos.size
    feats = Features(
        noisy_n=n_hat,
        signal=signal,
        top_share=float(top),
        occupied=float(np.mean(noisy.reshape(-1) > thresh)),
        dispersion=dispersion(noisy, thresh),
        noisy_cells=noisy_cells,
        points_per_cell=points_per_cell(n_hat, noisy_cells, cells_mech.scale),
    )
    scales = {**scales, "coarse_counts": coarse.scale, "occupied_cells": cells_mech.scale}
    return Measured(feats, noisy, scales, eps_n + eps_c + eps_d)
