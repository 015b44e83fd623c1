"""PrivTree of Zhang, Xiao, Xie (SIGMOD 2016; spec htf.md §3.7), one tree level at a time.

The structure gets eps_s = eps_tot/2 by PrivTree's theorem (biased counts b = max(count -
depth*delta, theta - delta) plus Lap(lambda), lambda = (2 beta - 1)/((beta - 1) eps_s), delta =
lambda ln beta). It is one `Laplace` mechanism for the whole tree, stated with the theorem's
effective sensitivity (2 beta - 1)/(beta - 1) so that scale = sensitivity / eps_s = lambda; it is
drawn level by level (only for nodes that can split: a 1 x 1 node is a leaf whatever its noisy
count, so its draw would be discarded), and the theorem (not parallel composition) makes all
those draws together eps_s-DP: a point affects only its root-to-leaf path, and the bias delta
per level turns that path's loss into a convergent series. Leaves get a fresh count + discrete Laplace(2/eps_tot).
The noisy b values only steer splits and are never released.

A person with at most K points is K points by group privacy: the structure is run at eps_s / K
per point (lambda and delta times K, i.e. effective sensitivity K (2 beta - 1)/(beta - 1)), and
the leaves get discrete Laplace(2K/eps_tot) (L1 sensitivity K over disjoint leaves).
"""

from __future__ import annotations

import math

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, Laplace
from core.spatial.baselines.inputs import check_epsilon, check_matrix, require
from core.spatial.baselines.rectangles import quad_children, rect_counts, summed_area
from core.spatial.common import count_mechanism
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

METHOD = "privtree"


def structure_sensitivity(beta: float = 4.0, k: int = 1) -> float:
    """PrivTree's effective sensitivity of the biased counts: K (2 beta - 1)/(beta - 1)."""
    return k * (2 * beta - 1) / (beta - 1)


def privtree_constants(eps_tot: float, beta: float = 4.0, k: int = 1) -> tuple[float, float]:
    """(lambda, delta) for the structure budget eps_tot/2 (K points per unit: both times K)."""
    eps_s = eps_tot / 2
    lam = structure_sensitivity(beta, k) / eps_s
    return lam, lam * math.log(beta)


def build_privtree(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    *,
    unit: Unit = POINT,
    beta: float = 4.0,
    theta: float = 0.0,
) -> Release:
    """PrivTree with the QuadTree split; no height limit (1 x 1 nodes cannot split).

    Privacy: eps_tot/2 on the structure (PrivTree's theorem, one `Laplace` mechanism) and
    eps_tot/2 on the disjoint leaves' counts (discrete Laplace, sensitivity K)."""
    F = check_matrix(F)
    check_epsilon(eps_tot)
    if not (math.isfinite(beta) and beta > 1):
        raise InputError(f"beta (PrivTree fan-out) must be > 1, got {beta!r}; the paper uses 4.")
    if not math.isfinite(theta):
        raise InputError(f"theta must be a finite number, got {theta!r}.")
    require(accountant, METHOD, eps_tot)
    ny, nx = F.shape
    lam, delta = privtree_constants(eps_tot, beta, unit.max_points)
    structure = Laplace(
        f"{METHOD}: biased node counts steering the splits (PrivTree theorem, whole tree)",
        sensitivity=structure_sensitivity(beta, unit.max_points),
        epsilon=eps_tot / 2,
    )
    P = summed_area(F)

    rects = np.array([[0, ny, 0, nx]], dtype=np.int64)
    leaf_parts = []
    depth = 0
    while len(rects):
        # a 1 x 1 node is a leaf whatever its noisy count: it gets no draw (the same output
        # distribution as drawing and discarding it; at 1024 x 1024 these were ~60 % of the
        # structure's draws). The call is made even when no node here can split, so the
        # structure mechanism is recorded from the root on, as before.
        splittable = (rects[:, 1] - rects[:, 0] > 1) | (rects[:, 3] - rects[:, 2] > 1)
        cand = rects[splittable]
        b = np.maximum(rect_counts(P, cand) - depth * delta, theta - delta)
        split = np.zeros(len(rects), dtype=bool)
        split[splittable] = structure.draw(accountant, b) > theta
        leaf_parts.append(rects[~split])
        rects, _ = quad_children(rects[split])
        depth += 1

    leaves = np.concatenate(leaf_parts)
    leaf_counts = count_mechanism(f"{METHOD}: leaf counts (disjoint leaves)", eps_tot / 2, unit)
    values = leaf_counts.draw(accountant, rect_counts(P, leaves)).astype(np.float64)
    return Release(
        method=METHOD,
        leaves=leaves,
        values=values,
        epsilon={"total": eps_tot, "structure": eps_tot / 2, "count": eps_tot / 2},
        mechanisms=accountant.mechanisms,
        unit=unit,
        params={"eps_tot": eps_tot, "beta": beta, "theta": theta},
        info={
            "lambda": lam,
            "delta": delta,
            "depth": depth - 1,
            "count_noise_scale": leaf_counts.scale,
        },
    )
