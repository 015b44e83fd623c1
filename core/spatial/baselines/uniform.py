"""Uniform (spec htf.md §3.2): one noisy total spread evenly over the whole domain.

The release is a single leaf covering the grid with value N + Lap(1/eps_tot); under the
uniformity assumption a query gets N_hat * |Q| / (ny * nx), the same as painting every cell.
"""

from __future__ import annotations

import numpy as np

from core.privacy import Accountant
from core.spatial.baselines.inputs import check_epsilon, check_matrix, require
from core.spatial.common import count_mechanism
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

METHOD = "uniform"


def build_uniform(
    F: np.ndarray, eps_tot: float, accountant: Accountant, *, unit: Unit = POINT
) -> Release:
    """Privacy: N + discrete Laplace(K/eps_tot) (sensitivity K, the unit's point bound)."""
    F = check_matrix(F)
    check_epsilon(eps_tot)
    require(accountant, METHOD, eps_tot)
    ny, nx = F.shape
    total = count_mechanism(f"{METHOD}: total number of points (one measurement)", eps_tot, unit)
    scale = total.scale
    n_hat = total.draw(accountant, np.array([F.sum()], dtype=np.int64)).astype(np.float64)
    return Release(
        method=METHOD,
        leaves=np.array([[0, ny, 0, nx]], dtype=np.int64),
        values=n_hat,
        epsilon={"total": eps_tot, "count": eps_tot},
        mechanisms=accountant.mechanisms,
        unit=unit,
        params={"eps_tot": eps_tot},
        info={"cells_per_axis": [1, 1], "count_noise_scale": scale},
    )
