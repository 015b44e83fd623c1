"""QuadTree of Cormode et al. (ICDE 2012; spec htf.md §3.6), built level by level on arrays.

The structure is data-independent (no split budget); every node is measured with its height's
share of eps_tot - eps_n, and GLS consistency (§3.9) adjusts the leaves. With height="auto" the
height comes from HTF's formula on a noisy N (eps_n = 5 % of ε by default, or a declared public
size): h_q = min(q_max, ceil(h/2)), with ε / K in the formula for a person unit.
"""

from __future__ import annotations

import math

import numpy as np

from core.errors import InputError
from core.privacy import Accountant
from core.spatial.baselines.inputs import (
    check_count_budget,
    check_epsilon,
    check_matrix,
    check_positive,
    fixed_or_auto_height,
    require,
    size_budget,
    sized_height,
)
from core.spatial.baselines.rectangles import quad_children, summed_area
from core.spatial.baselines.tree_counts import (
    CountPlan,
    MeasuredLevels,
    count_shares,
    measure_level,
)
from core.spatial.common import tree_height
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit, effective_epsilon

METHOD = "quadtree"


def quadtree_max_height(ny: int, nx: int) -> int:
    """q_max = max(ceil(log2 ny), ceil(log2 nx)): the depth where every node is one cell."""
    return max(math.ceil(math.log2(ny)), math.ceil(math.log2(nx)))


def quadtree_height(n_hat: float, eps_tot: float, ny: int, nx: int, c0: float = 10.0) -> int:
    """h_q = min(q_max, ceil(h/2)) with h from HTF's height formula."""
    return min(quadtree_max_height(ny, nx), math.ceil(tree_height(n_hat, eps_tot, ny, nx, c0) / 2))


LEAF_SIGNAL = 400.0  # `leaf-count` rule: noisy points x eps per leaf (see quadtree_leaf_height)


def quadtree_leaf_height(n_hat: float, eps: float, ny: int, nx: int, c: float = LEAF_SIGNAL) -> int:
    """Improved rule (labelled variant `quadtree-leaves`, not the paper's): 4^h ~ N eps / c leaves.

    h = round(log4(n_hat eps / c)) clamped to [1, q_max], so that each leaf expects about c / eps
    points — enough above its count noise. c = 400 comes from the synthetic benchmark grid.
    """
    arg = max(n_hat, 1.0) * eps / c
    h = round(math.log(arg, 4)) if arg > 1 else 1
    return int(min(max(h, 1), quadtree_max_height(ny, nx)))


def build_quadtree(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    *,
    unit: Unit = POINT,
    height: int | str = "auto",
    eps_n: float | None = None,
    public_n: float | None = None,
    c0: float = 10.0,
    count_budget: str = "geometric",
    consistency: bool = True,
    height_rule: str = "paper",
) -> Release:
    """Complete quadtree of height h_q; leaves are the depth-h_q nodes (1 x 1 nodes stop earlier).

    `height_rule` (used when height="auto"): "paper" = min(q_max, ceil(h/2)) with HTF's h (faithful),
    "leaf-count" = `quadtree_leaf_height` (improved, labelled variant). Privacy: eps_n on the noisy
    N (sensitivity K) plus the per-level count shares (`CountPlan`: discrete Laplace, sensitivity
    K per level over disjoint nodes), K = the unit's point bound: eps_tot in total.
    """
    if height_rule not in ("paper", "leaf-count"):
        raise InputError(f"height_rule must be 'paper' or 'leaf-count', got {height_rule!r}.")
    F = check_matrix(F)
    fixed = fixed_or_auto_height(height)
    check_epsilon(eps_tot)
    eps_n_used = size_budget(eps_tot, eps_n, public_n) if fixed is None else 0.0
    check_epsilon(eps_tot, eps_n_used)
    check_positive("c0", c0)
    check_count_budget(count_budget)
    require(accountant, METHOD, eps_tot)
    ny, nx = F.shape
    e_size = effective_epsilon(eps_tot, unit)
    h, info = sized_height(
        F, fixed, eps_n_used, public_n, accountant, METHOD, unit,
        (lambda n_hat: quadtree_height(n_hat, e_size, ny, nx, c0))
        if height_rule == "paper"
        else (lambda n_hat: quadtree_leaf_height(
            n_hat, effective_epsilon(eps_tot - eps_n_used, unit), ny, nx)),
    )  # fmt: skip
    if fixed is not None and fixed > quadtree_max_height(ny, nx):
        h = quadtree_max_height(ny, nx)
        info["height_clamped_from"] = fixed
    eps_c = eps_tot - eps_n_used
    shares = count_shares(h, eps_c, count_budget)
    plan = CountPlan(METHOD, shares, unit, accountant)
    levels = _measure_quadtree(F, h, plan, accountant)
    leaves, values = levels.release(consistency)
    info.update(height=h, n_nodes=levels.n_nodes, count_shares_by_height=shares.tolist())
    return Release(
        method=METHOD,
        leaves=leaves,
        values=values,
        epsilon={"total": eps_tot, "n": eps_n_used, "count": eps_c},
        mechanisms=accountant.mechanisms,
        planned=plan.levels,
        unit=unit,
        params={
            "eps_tot": eps_tot,
            "height": height,
            "eps_n": eps_n_used,
            "public_n": public_n,
            "c0": c0,
            "count_budget": count_budget,
            "consistency": consistency,
            "height_rule": height_rule,
        },
        info=info,
    )


def _measure_quadtree(
    F: np.ndarray, h: int, plan: CountPlan, accountant: Accountant
) -> MeasuredLevels:
    ny, nx = F.shape
    P = summed_area(F)
    levels = MeasuredLevels()
    rects = np.array([[0, ny, 0, nx]], dtype=np.int64)
    parents = np.array([-1], dtype=np.int64)
    for d in range(h + 1):
        if d < h:
            children, child_parent = quad_children(rects)
            leaf = np.bincount(child_parent, minlength=len(rects)) == 0
        else:
            leaf = np.ones(len(rects), dtype=bool)
        y, var = measure_level(P, rects, leaf, h - d, plan, accountant)
        levels.add(rects, parents, y, var, leaf, y)
        if d < h:
            if len(children) == 0:
                break
            rects, parents = children, child_parent
    return levels
