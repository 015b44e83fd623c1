"""kd-tree of Cormode et al. (ICDE 2012; spec htf.md §3.5), built one depth at a time on arrays.

Binary splits follow HTF's axis rule (§2.3); each split offset is a private median drawn by the
exponential mechanism (`Exponential`, one object per depth, drawn with `draw_segments` over the
ragged candidate lists of the depth's disjoint nodes) over the node's grid boundaries, score
u(s) = -|P_s - n/2| (sensitivity <= K: one point moves it by at most 1/2, K points by K/2; the
bound K keeps the project's earlier, conservative 1 per point), sampled exactly as
P(s) ∝ exp(eps_m u(s) / (2K)) by Gumbel-max. All candidate offsets of all nodes of one depth are
scored together from the summed-area table, so a 2^17-leaf tree costs a few array passes per
level. Every node is measured (geometric or uniform count budget, `CountPlan`) and GLS
consistency (§3.9) adjusts the leaves.
"""

from __future__ import annotations

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, Exponential
from core.spatial.baselines.inputs import (
    check_count_budget,
    check_epsilon,
    check_fraction,
    check_matrix,
    check_positive,
    fixed_or_auto_height,
    require,
    size_budget,
    sized_height,
)
from core.spatial.baselines.rectangles import rect_counts, segment_index, summed_area
from core.spatial.baselines.tree_counts import (
    CountPlan,
    MeasuredLevels,
    count_shares,
    measure_level,
    variance,
)
from core.spatial.common import tree_height
from core.spatial.consistency import combine_measurements
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit, effective_epsilon

AXES = ("y", "x")


def median_mechanism(method: str, depth: int, eps_m: float, unit: Unit) -> Exponential:
    """The exponential mechanism choosing the split medians of one depth's (disjoint) nodes."""
    return Exponential(
        f"{method}: split medians, depth {depth}", sensitivity=unit.max_points, epsilon=eps_m
    )


def exponential_median_offsets(
    P: np.ndarray,
    rects: np.ndarray,
    split_rows: np.ndarray,
    counts: np.ndarray,
    mechanism: Exponential,
    accountant: Accountant,
) -> np.ndarray:
    """Private median offset s in [1, L-1] for every node (L = extent on its axis, >= 2)."""
    L = np.where(split_rows, rects[:, 1] - rects[:, 0], rects[:, 3] - rects[:, 2])
    n_cand = L - 1
    node, t = segment_index(n_cand)
    s = t + 1
    r0, c0 = rects[node, 0], rects[node, 2]
    rows = split_rows[node]
    r1 = np.where(rows, r0 + s, rects[node, 1])
    c1 = np.where(rows, rects[node, 3], c0 + s)
    P_s = P[r1, c1] - P[r0, c1] - P[r1, c0] + P[r0, c0]
    score = -np.abs(P_s - counts[node] / 2.0)
    chosen = mechanism.draw_segments(accountant, score, node)
    return s[chosen]


def _binary_children(rects: np.ndarray, split_rows: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """Children (2 per node, first part then second) of a split at `offset` along rows or columns."""
    k = len(rects)
    out = np.repeat(rects, 2, axis=0)
    cut_r = rects[:, 0] + offset
    cut_c = rects[:, 2] + offset
    first, second = np.arange(0, 2 * k, 2), np.arange(1, 2 * k, 2)
    out[first, 1] = np.where(split_rows, cut_r, rects[:, 1])
    out[second, 0] = np.where(split_rows, cut_r, rects[:, 0])
    out[first, 3] = np.where(split_rows, rects[:, 3], cut_c)
    out[second, 2] = np.where(split_rows, rects[:, 2], cut_c)
    return out


def build_kdtree(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    *,
    unit: Unit = POINT,
    count_budget: str = "geometric",
    height: int | str = "auto",
    eps_n: float | None = None,
    public_n: float | None = None,
    c0: float = 10.0,
    split_share: float = 0.30,
    consistency: bool = True,
    early_stop: float | None = None,
    even_axis: str = "y",
    switch_level: int | None = None,
    method: str | None = None,
) -> Release:
    """kd-tree with exponential-mechanism medians; see the module docstring.

    `switch_level` = k turns on the kd-hybrid: private medians only at depths < k (eps_split/k
    each), data-independent midpoints (offset L // 2) below, at no budget. None: medians everywhere.

    Privacy (unit: a point, or a person with at most K points): eps_n on the noisy N (Laplace,
    sensitivity K) unless the height is fixed or `public_n` declared; eps_m per median depth
    (exponential mechanism, score sensitivity K, disjoint nodes); the count shares per height
    (discrete Laplace, sensitivity K, disjoint nodes; replacements per path). eps_tot in total.
    """
    method = method or f"kdtree-{'geo' if count_budget == 'geometric' else count_budget}"
    F = check_matrix(F)
    fixed = fixed_or_auto_height(height)
    if fixed is not None and fixed < 1:
        raise InputError(f"kd-tree height must be >= 1, got {fixed}.")
    check_epsilon(eps_tot)
    eps_n_used = size_budget(eps_tot, eps_n, public_n) if fixed is None else 0.0
    check_epsilon(eps_tot, eps_n_used)
    check_positive("c0", c0)
    check_fraction("split_share", split_share, open_low=False)
    check_count_budget(count_budget)
    if even_axis not in AXES:
        raise InputError(f'even_axis must be "y" or "x", got {even_axis!r}.')
    if switch_level is not None and (
        isinstance(switch_level, bool) or not isinstance(switch_level, int) or switch_level < 1
    ):
        raise InputError(f"switch_level must be None or an integer >= 1, got {switch_level!r}.")
    if early_stop is not None and not np.isfinite(early_stop):
        raise InputError(
            f"early_stop must be a finite count threshold or None, got {early_stop!r}."
        )
    require(accountant, method, eps_tot)
    ny, nx = F.shape
    e_size = effective_epsilon(eps_tot, unit)
    h, info = sized_height(
        F, fixed, eps_n_used, public_n, accountant, method, unit,
        lambda n_hat: tree_height(n_hat, e_size, ny, nx, c0),
    )  # fmt: skip
    eps_c = eps_tot - eps_n_used
    eps_split = split_share * eps_c
    eps_count = eps_c - eps_split
    median_levels = h if switch_level is None else min(switch_level, h)
    eps_m = eps_split / median_levels
    shares = count_shares(h, eps_count, count_budget)
    plan = CountPlan(method, shares, unit, accountant)
    # split_share 0: no private medians at all (data-independent midpoints, no budget)
    medians = [median_mechanism(method, d, eps_m, unit) for d in range(median_levels) if eps_m > 0]
    levels = _grow_kdtree(F, h, medians, plan, even_axis, early_stop, accountant)
    leaves, values = levels.release(consistency)
    info.update(height=h, n_nodes=levels.n_nodes, count_shares_by_height=shares.tolist())
    if switch_level is not None:
        info["variant"] = f"kd-hybrid (private medians in the top {median_levels} levels)"
    return Release(
        method=method,
        leaves=leaves,
        values=values,
        epsilon={"total": eps_tot, "n": eps_n_used, "split": eps_split, "count": eps_count},
        mechanisms=accountant.mechanisms,
        planned=plan.levels,
        unit=unit,
        params={
            "eps_tot": eps_tot,
            "height": height,
            "eps_n": eps_n_used,
            "public_n": public_n,
            "c0": c0,
            "split_share": split_share,
            "count_budget": count_budget,
            "consistency": consistency,
            "early_stop": early_stop,
            "even_axis": even_axis,
            "switch_level": switch_level,
        },
        info=info,
    )


def _grow_kdtree(
    F: np.ndarray,
    h: int,
    medians: list[Exponential],
    plan: CountPlan,
    even_axis: str,
    early_stop: float | None,
    accountant: Accountant,
) -> MeasuredLevels:
    ny, nx = F.shape
    P = summed_area(F)
    rem = plan.rem
    levels = MeasuredLevels()
    rects = np.array([[0, ny, 0, nx]], dtype=np.int64)
    parents = np.array([-1], dtype=np.int64)
    for d in range(h + 1):
        i = h - d
        ext_r, ext_c = rects[:, 1] - rects[:, 0], rects[:, 3] - rects[:, 2]
        unsplittable = (ext_r == 1) & (ext_c == 1)
        counts = rect_counts(P, rects)
        if early_stop is None:
            leaf = unsplittable | (i == 0)
            y, var = measure_level(P, rects, leaf, i, plan, accountant)
            leaf_value = y
        else:
            # Alg. 3 rule: y1 with eps_i decides; a leaf above height 0 re-measures with rem(i).
            y1 = plan.level(i).draw(accountant, counts).astype(np.float64)
            var1 = np.full(len(rects), variance(plan.level(i)))
            leaf = unsplittable | (i == 0) | (y1 <= early_stop)
            y, var, leaf_value = y1, var1, y1.copy()
            if rem[i] > 0 and leaf.any():
                again = plan.remainder(i)
                y2 = again.draw(accountant, counts[leaf]).astype(np.float64)
                leaf_value[leaf] = y2
                y = y1.copy()
                var = var1.copy()
                y[leaf], var[leaf] = combine_measurements(y1[leaf], var1[leaf], y2, variance(again))
        levels.add(rects, parents, y, var, leaf, leaf_value)
        inner = np.flatnonzero(~leaf)
        if len(inner) == 0:
            break
        R = rects[inner]
        prefer_rows = (i % 2 == 0) == (even_axis == "y")
        split_rows = (ext_r[inner] >= 2) if prefer_rows else (ext_c[inner] < 2)
        if d < len(medians):
            offsets = exponential_median_offsets(
                P, R, split_rows, counts[inner], medians[d], accountant
            )
        else:  # kd-hybrid below the switch level: midpoints, no budget
            offsets = np.where(split_rows, R[:, 1] - R[:, 0], R[:, 3] - R[:, 2]) // 2
        rects = _binary_children(R, split_rows, offsets)
        parents = np.repeat(inner, 2)
    return levels


def build_kdtree_geo(F: np.ndarray, eps_tot: float, accountant: Accountant, **params) -> Release:
    """ "KdTree (geo)": geometric count budget, GLS consistency on by default."""
    return build_kdtree(
        F, eps_tot, accountant, count_budget="geometric", method="kdtree-geo", **params
    )


def build_kdtree_uniform(
    F: np.ndarray, eps_tot: float, accountant: Accountant, **params
) -> Release:
    """ "KdTree (uniform)": equal count budget per level, GLS consistency on by default."""
    return build_kdtree(
        F, eps_tot, accountant, count_budget="uniform", method="kdtree-uniform", **params
    )
