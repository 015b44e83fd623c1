"""AG, the adaptive grid of Qardaji, Yang, Li (ICDE 2013; spec htf.md §3.4).

Level 1: an m1 x m1 near-equal grid measured with alpha * eps_c. Level 2: each first-level cell a
is cut into m2_a x m2_a near-equal sub-cells (m2_a from its noisy count: post-processing),
measured with (1 - alpha) * eps_c. Inference combines v_a with the sum of its sub-cells by inverse
variance and spreads the difference evenly (mean consistency). Fully vectorised: all sub-cells of
all first-level cells are generated and counted at once from the summed-area table.
"""

from __future__ import annotations

import math

import numpy as np

from core.privacy import Accountant
from core.spatial.baselines.inputs import (
    check_epsilon,
    check_fraction,
    check_matrix,
    check_positive,
    require,
    size_budget,
    sized_n,
)
from core.spatial.baselines.rectangles import grid_rects, rect_counts, subgrid_rects, summed_area
from core.spatial.common import ceil_tol, count_mechanism, near_equal_edges
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit, effective_epsilon

METHOD = "ag"


def ag_m1(n_hat: float, eps_tot: float, c: float = 10.0) -> int:
    """First-level cells per axis: max(10, ceil(sqrt(max(N_hat, 0) * eps_tot / c) / 4))."""
    return max(10, ceil_tol(math.sqrt(max(n_hat, 0.0) * eps_tot / c) / 4))


def ag_m2(v: np.ndarray, eps_tot: float, alpha: float = 0.5, c2: float = 5.0) -> np.ndarray:
    """Sub-cells per axis of each first-level cell: 1 if v <= 0, else ceil(sqrt(v (1-alpha) eps / c2))."""
    v = np.asarray(v, dtype=np.float64)
    m = np.sqrt(np.maximum(v, 0.0) * (1 - alpha) * eps_tot / c2)
    return np.where(v <= 0, 1, np.maximum(1, np.ceil(m - 1e-9))).astype(np.int64)


def ag_inference(
    v: np.ndarray, u: np.ndarray, parent: np.ndarray, k: np.ndarray, alpha: float
) -> np.ndarray:
    """Sub-cell values after inference (§3.4 step 6).

    v'_a = (alpha^2 k_a v_a + (1-alpha)^2 U_a) / (alpha^2 k_a + (1-alpha)^2) is the inverse-variance
    average of v_a (budget alpha) and U_a = sum of its k_a sub-cells (budget 1 - alpha each); the
    difference v'_a - U_a is then spread evenly over the sub-cells, so they sum to v'_a.
    """
    k = np.asarray(k, dtype=np.float64)
    U = np.bincount(parent, weights=u, minlength=len(v))
    a2, b2 = alpha**2, (1 - alpha) ** 2
    v_adj = (a2 * k * v + b2 * U) / (a2 * k + b2)
    return u + ((v_adj - U) / k)[parent]


def build_ag(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    *,
    unit: Unit = POINT,
    eps_n: float | None = None,
    public_n: float | None = None,
    alpha: float = 0.5,
    c: float = 10.0,
    c2: float = 5.0,
) -> Release:
    """Two-level adaptive grid; leaves are the second-level sub-cells with inferred values.

    Privacy (unit: a point, or a person with at most K points): eps_n on N (Laplace,
    sensitivity K; none with `public_n`), alpha (eps_tot - eps_n) on the first-level cells and
    the rest on the sub-cells (discrete Laplace, L1 sensitivity K over each level's disjoint
    cells): eps_tot in total. The sizing rules read ε / K (their noise scale is K / ε).
    """
    F = check_matrix(F)
    check_epsilon(eps_tot)
    eps_n_used = size_budget(eps_tot, eps_n, public_n)
    check_epsilon(eps_tot, eps_n_used)
    check_fraction("alpha", alpha)
    check_positive("c", c)
    check_positive("c2", c2)
    require(accountant, METHOD, eps_tot)
    ny, nx = F.shape
    n_size, info = sized_n(F, eps_n_used, public_n, accountant, METHOD, unit)
    eps_c = eps_tot - eps_n_used
    eps1, eps2 = alpha * eps_c, (1 - alpha) * eps_c
    e_size = effective_epsilon(eps_tot, unit)
    m1 = ag_m1(n_size, e_size, c)
    m1y, m1x = min(m1, ny), min(m1, nx)
    cells1 = grid_rects(near_equal_edges(ny, m1y), near_equal_edges(nx, m1x))
    P = summed_area(F)

    level1 = count_mechanism(f"{METHOD}: first-level cell counts (disjoint cells)", eps1, unit)
    v = level1.draw(accountant, rect_counts(P, cells1)).astype(np.float64)
    m2 = ag_m2(v, e_size, alpha, c2)
    m2y = np.minimum(m2, cells1[:, 1] - cells1[:, 0])
    m2x = np.minimum(m2, cells1[:, 3] - cells1[:, 2])
    cells2, parent = subgrid_rects(cells1, m2y, m2x)

    level2 = count_mechanism(f"{METHOD}: second-level sub-cell counts (disjoint cells)", eps2, unit)
    u = level2.draw(accountant, rect_counts(P, cells2)).astype(np.float64)

    values = ag_inference(v, u, parent, m2y * m2x, alpha)
    return Release(
        method=METHOD,
        leaves=cells2,
        values=values,
        epsilon={"total": eps_tot, "n": eps_n_used, "level1": eps1, "level2": eps2},
        mechanisms=accountant.mechanisms,
        unit=unit,
        params={
            "eps_tot": eps_tot,
            "eps_n": eps_n_used,
            "public_n": public_n,
            "alpha": alpha,
            "c": c,
            "c2": c2,
        },  # fmt: skip
        info={
            **info,
            "first_level_cells_per_axis": [m1y, m1x],
            "n_first_level": len(cells1),
            "count_noise_scale": [level1.scale, level2.scale],
        },
    )
