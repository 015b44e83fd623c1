"""PrivTree of Zhang, Xiao, Xie (SIGMOD 2016; spec htf.md §3.7), one tree level at a time.

The structure gets eps_s = eps_tot/2 by PrivTree's theorem (biased counts b = max(count -
depth*delta, theta - delta) plus Lap(lambda), lambda = (2 beta - 1)/((beta - 1) eps_s), delta =
lambda ln beta); it is not a per-node sum, so it is one ledger entry. Leaves get a fresh
count + discrete Laplace(2/eps_tot). The noisy b values only steer splits and are never released.
"""

from __future__ import annotations

import math

import numpy as np

from core.errors import InputError
from core.privacy import BudgetLedger, Noise
from core.spatial.baselines.inputs import check_epsilon, check_matrix, reserve
from core.spatial.baselines.rectangles import quad_children, rect_counts, summed_area
from core.spatial.release import Release

METHOD = "privtree"


def privtree_constants(eps_tot: float, beta: float = 4.0) -> tuple[float, float]:
    """(lambda, delta) for the structure budget eps_tot/2."""
    eps_s = eps_tot / 2
    lam = (2 * beta - 1) / ((beta - 1) * eps_s)
    return lam, lam * math.log(beta)


def build_privtree(
    F: np.ndarray,
    eps_tot: float,
    noise: Noise,
    ledger: BudgetLedger,
    *,
    beta: float = 4.0,
    theta: float = 0.0,
) -> Release:
    """PrivTree with the QuadTree split; no height limit (1 x 1 nodes cannot split)."""
    F = check_matrix(F)
    check_epsilon(eps_tot)
    if not (math.isfinite(beta) and beta > 1):
        raise InputError(f"beta (PrivTree fan-out) must be > 1, got {beta!r}; the paper uses 4.")
    if not math.isfinite(theta):
        raise InputError(f"theta must be a finite number, got {theta!r}.")
    reserve(ledger, METHOD, eps_tot)
    scope = ledger.scope(METHOD)
    ny, nx = F.shape
    lam, delta = privtree_constants(eps_tot, beta)
    P = summed_area(F)
    ledger.spend(METHOD, "tree structure (PrivTree theorem, whole tree)", eps_tot / 2)

    rects = np.array([[0, ny, 0, nx]], dtype=np.int64)
    leaf_parts = []
    depth = 0
    while len(rects):
        b = np.maximum(rect_counts(P, rects) - depth * delta, theta - delta)
        b_hat = b + noise.laplace(lam, size=len(rects))
        splittable = (rects[:, 1] - rects[:, 0] > 1) | (rects[:, 3] - rects[:, 2] > 1)
        split = (b_hat > theta) & splittable
        leaf_parts.append(rects[~split])
        rects, _ = quad_children(rects[split])
        depth += 1

    leaves = np.concatenate(leaf_parts)
    ledger.spend(
        METHOD,
        "leaf counts (disjoint leaves)",
        eps_tot / 2,
        composition="parallel",
        group=f"{scope}-leaves",
    )
    values = noise.add_laplace(rect_counts(P, leaves), 2.0 / eps_tot).astype(np.float64)
    return Release(
        method=METHOD,
        leaves=leaves,
        values=values,
        epsilon={"total": eps_tot, "structure": eps_tot / 2, "count": eps_tot / 2},
        ledger=ledger,
        params={"eps_tot": eps_tot, "beta": beta, "theta": theta},
        info={
            "lambda": lam,
            "delta": delta,
            "depth": depth - 1,
            "count_noise_scale": 2.0 / eps_tot,
        },
    )
