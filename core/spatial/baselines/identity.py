"""Identity ("Singular" in the HTF paper, spec htf.md §3.2): every grid cell is a leaf.

Each cell releases F[r, c] + discrete Laplace(K/eps_tot): L1 sensitivity K (a point, K = 1, or
a person with at most K points) over disjoint cells, so the whole matrix is eps_tot-DP.
"""

from __future__ import annotations

import numpy as np

from core.privacy import Accountant
from core.spatial.baselines.inputs import check_epsilon, check_matrix, require
from core.spatial.baselines.rectangles import grid_rects
from core.spatial.common import count_mechanism
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

METHOD = "identity"


def build_identity(
    F: np.ndarray, eps_tot: float, accountant: Accountant, *, unit: Unit = POINT
) -> Release:
    """One leaf per cell, row-major, so `values.reshape(ny, nx)` is the noisy matrix."""
    F = check_matrix(F)
    check_epsilon(eps_tot)
    require(accountant, METHOD, eps_tot)
    ny, nx = F.shape
    cells = count_mechanism(f"{METHOD}: every cell count (disjoint cells)", eps_tot, unit)
    scale = cells.scale
    values = cells.draw(accountant, F.reshape(-1)).astype(np.float64)
    return Release(
        method=METHOD,
        leaves=grid_rects(np.arange(ny + 1), np.arange(nx + 1)),
        values=values,
        epsilon={"total": eps_tot, "count": eps_tot},
        mechanisms=accountant.mechanisms,
        unit=unit,
        params={"eps_tot": eps_tot},
        info={"cells_per_axis": [ny, nx], "count_noise_scale": scale},
    )
