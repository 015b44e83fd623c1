"""Identity ("Singular" in the HTF paper, spec htf.md §3.2): every grid cell is a leaf.

Each cell releases F[r, c] + discrete Laplace(1/eps_tot): sensitivity 1, disjoint cells, so the
whole matrix is eps_tot-DP by parallel composition.
"""

from __future__ import annotations

import numpy as np

from core.privacy import BudgetLedger, Noise
from core.spatial.baselines.inputs import check_epsilon, check_matrix, reserve
from core.spatial.baselines.rectangles import grid_rects
from core.spatial.release import Release

METHOD = "identity"


def build_identity(F: np.ndarray, eps_tot: float, noise: Noise, ledger: BudgetLedger) -> Release:
    """One leaf per cell, row-major, so `values.reshape(ny, nx)` is the noisy matrix."""
    F = check_matrix(F)
    check_epsilon(eps_tot)
    reserve(ledger, METHOD, eps_tot)
    ny, nx = F.shape
    scale = 1.0 / eps_tot
    ledger.spend(
        METHOD,
        "every cell count (disjoint cells)",
        eps_tot,
        composition="parallel",
        group=f"{ledger.scope(METHOD)}-cells",
    )
    values = noise.add_laplace(F.reshape(-1), scale).astype(np.float64)
    return Release(
        method=METHOD,
        leaves=grid_rects(np.arange(ny + 1), np.arange(nx + 1)),
        values=values,
        epsilon={"total": eps_tot, "count": eps_tot},
        ledger=ledger,
        params={"eps_tot": eps_tot},
        info={"cells_per_axis": [ny, nx], "count_noise_scale": scale},
    )
