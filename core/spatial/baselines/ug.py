"""UG, the uniform grid of Qardaji, Yang, Li (ICDE 2013; spec htf.md §3.3).

The grid side m = sqrt(N_hat * eps_tot / c) is sized from a noisy N (eps_n, ledgered), never the
true N; choosing the grid from N_hat is post-processing. Each cell then gets count +
discrete Laplace(1/(eps_tot - eps_n)), cells in parallel.
"""

from __future__ import annotations

import math

import numpy as np

from core.errors import InputError
from core.privacy import BudgetLedger, Noise
from core.spatial.baselines.inputs import (
    check_epsilon,
    check_matrix,
    check_positive,
    reserve,
)
from core.spatial.baselines.rectangles import grid_rects
from core.spatial.common import ceil_tol, floor_tol, near_equal_edges, noisy_total
from core.spatial.release import Release

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
    noise: Noise,
    ledger: BudgetLedger,
    *,
    eps_n: float = 1e-4,
    c: float = 10.0,
    sizing: str = "intervals",
) -> Release:
    """Uniform grid; leaves are its cells, row-major (`values.reshape(*info["cells_per_axis"])`)."""
    F = check_matrix(F)
    check_epsilon(eps_tot, eps_n)
    check_positive("eps_n", eps_n)
    check_positive("c", c)
    if sizing not in SIZINGS:
        raise InputError(f"sizing must be one of {', '.join(SIZINGS)}, got {sizing!r}.")
    reserve(ledger, METHOD, eps_tot)
    scope = ledger.scope(METHOD)
    ny, nx = F.shape
    n_hat = noisy_total(F, eps_n, noise, ledger, METHOD)
    row_edges, col_edges = ug_edges(n_hat, eps_tot, ny, nx, c, sizing)
    eps_c = eps_tot - eps_n
    counts = np.add.reduceat(np.add.reduceat(F, row_edges[:-1], axis=0), col_edges[:-1], axis=1)
    ledger.spend(
        METHOD,
        "grid cell counts (disjoint cells)",
        eps_c,
        composition="parallel",
        group=f"{scope}-cells",
    )
    values = noise.add_laplace(counts.reshape(-1), 1.0 / eps_c).astype(np.float64)
    return Release(
        method=METHOD,
        leaves=grid_rects(row_edges, col_edges),
        values=values,
        epsilon={"total": eps_tot, "n": eps_n, "count": eps_c},
        ledger=ledger,
        params={"eps_tot": eps_tot, "eps_n": eps_n, "c": c, "sizing": sizing},
        info={
            "n_hat": n_hat,
            "cells_per_axis": [len(row_edges) - 1, len(col_edges) - 1],
            "count_noise_scale": 1.0 / eps_c,
        },
    )
