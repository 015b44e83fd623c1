"""Uniform (spec htf.md §3.2): one noisy total spread evenly over the whole domain.

The release is a single leaf covering the grid with value N + Lap(1/eps_tot); under the
uniformity assumption a query gets N_hat * |Q| / (ny * nx), the same as painting every cell.
"""

from __future__ import annotations

import numpy as np

from core.privacy import BudgetLedger, Noise
from core.spatial.baselines.inputs import check_epsilon, check_matrix, reserve
from core.spatial.release import Release

METHOD = "uniform"


def build_uniform(F: np.ndarray, eps_tot: float, noise: Noise, ledger: BudgetLedger) -> Release:
    F = check_matrix(F)
    check_epsilon(eps_tot)
    reserve(ledger, METHOD, eps_tot)
    ny, nx = F.shape
    scale = 1.0 / eps_tot
    ledger.spend(METHOD, "total number of points (one measurement)", eps_tot)
    n_hat = noise.add_laplace(np.array([F.sum()], dtype=np.int64), scale).astype(np.float64)
    return Release(
        method=METHOD,
        leaves=np.array([[0, ny, 0, nx]], dtype=np.int64),
        values=n_hat,
        epsilon={"total": eps_tot, "count": eps_tot},
        ledger=ledger,
        params={"eps_tot": eps_tot},
        info={"cells_per_axis": [1, 1], "count_noise_scale": scale},
    )
