"""UG, the uniform grid of Qardaji, Yang, Li (ICDE 2013; spec htf.md §3.3).

The grid side m = sqrt(N_hat * eps_tot / c) is sized from a noisy N (eps_n = 5 % of ε by default,
`core.spatial.common.N_SHARE`; or a declared public size), never the true N; choosing the grid
from N_hat is post-processing. Each cell then gets count + discrete Laplace(K/(eps_tot - eps_n)),
cells in parallel (K: the unit's point bound; the side uses ε / K).
"""

from __future__ import annotations

import math

import numpy as np

from core.errors import InputError
from core.privacy import Accountant
from core.spatial.baselines.inputs import (
    check_epsilon,
    check_matrix,
    check_positive,
    require,
    size_budget,
    sized_n,
)
from core.spatial.baselines.rectangles import grid_rects
from core.spatial.common import ceil_tol, count_mechanism, floor_tol, near_equal_edges
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit, effective_epsilon

METHOD = "ug"
SIZINGS = ("intervals", "side")


def ug_side(n_hat: float, eps_tot: float, c: float = 10.0) -> float:
    """Qardaji et al.'s grid size m = sqrt(max(N_hat, 0) * eps_tot / c) (cells per axis, real)."""
    return math.sqrt(max(n_hat, 0.0) * eps_tot / c)


def ug_edges(
    n_hat: float, eps_tot: float, ny: int, nx: int, c: float = 10.0, sizing: str = "intervals"
) -> tuple[np.ndarray, np.ndarray]:
    """Row and column edges of the UG grid.

    "intervals" (default): ceil(m) near-equal intervals per axis (clamped to the extent).
    "side": integer side max(1, floor(sqrt(ny*nx)/m)), cells of that side from 0, last one cut.
    """
    m = ug_side(n_hat, eps_tot, c)
    if sizing == "intervals":
        m_int = max(1, ceil_tol(m))
        return near_equal_edges(ny, min(m_int, ny)), near_equal_edges(nx, min(m_int, nx))
    if sizing == "side":
        side = max(1, floor_tol(math.sqrt(ny * nx) / m)) if m > 0 else max(ny, nx)
        return _side_edges(ny, side), _side_edges(nx, side)
    raise InputError(f"sizing must be one of {', '.join(SIZINGS)}, got {sizing!r}.")


def _side_edges(n: int, side: int) -> np.ndarray:
    return np.append(np.arange(0, n, side, dtype=np.int64), np.int64(n))


def build_ug(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    *,
    unit: Unit = POINT,
    eps_n: float | None = None,
    public_n: float | None = None,
    c: float = 10.0,
    sizing: str = "intervals",
) -> Release:
    """Uniform grid; leaves are its cells, row-major (`values.reshape(*info["cells_per_axis"])`).

    Privacy (unit: a point, or a person with at most K points): eps_n on N (Laplace,
    sensitivity K; none with `public_n`) + eps_tot - eps_n on the disjoint cells' counts
    (discrete Laplace, L1 sensitivity K): eps_tot in total.
    """
    F = check_matrix(F)
    check_epsilon(eps_tot)
    eps_n_used = size_budget(eps_tot, eps_n, public_n)
    check_epsilon(eps_tot, eps_n_used)
    check_positive("c", c)
    if sizing not in SIZINGS:
        raise InputError(f"sizing must be one of {', '.join(SIZINGS)}, got {sizing!r}.")
    require(accountant, METHOD, eps_tot)
    ny, nx = F.shape
    n_size, info = sized_n(F, eps_n_used, public_n, accountant, METHOD, unit)
    row_edges, col_edges = ug_edges(n_size, effective_epsilon(eps_tot, unit), ny, nx, c, sizing)
    eps_c = eps_tot - eps_n_used
    counts = np.add.reduceat(np.add.reduceat(F, row_edges[:-1], axis=0), col_edges[:-1], axis=1)
    cells = count_mechanism(f"{METHOD}: grid cell counts (disjoint cells)", eps_c, unit)
    values = cells.draw(accountant, counts.reshape(-1)).astype(np.float64)
    return Release(
        method=METHOD,
        leaves=grid_rects(row_edges, col_edges),
        values=values,
        epsilon={"total": eps_tot, "n": eps_n_used, "count": eps_c},
        mechanisms=accountant.mechanisms,
        unit=unit,
        params={
            "eps_tot": eps_tot,
            "eps_n": eps_n_used,
            "public_n": public_n,
            "c": c,
            "sizing": sizing,
        },  # fmt: skip
        info={
            **info,
            "cells_per_axis": [len(row_edges) - 1, len(col_edges) - 1],
            "count_noise_scale": cells.scale,
        },
    )
