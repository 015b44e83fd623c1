"""HB, the hierarchical method of Qardaji, Yang, Li (PVLDB 2013, "Understanding hierarchical
methods for differentially private histograms"), as a labelled baseline.

The method: a tree of nested near-equal intervals with branching factor b and height h chosen
for the domain size by the paper's analysis of the average variance of range queries; every
level is measured with an equal share of ε (disjoint nodes: parallel composition within a
level); constrained inference (the least-squares estimate consistent with the tree, computed in
two passes, Hay et al. 2010) gives the leaves. The root is not measured (as in the paper).

Choice of (b, h):

* 1-D (the paper's Equation 3, with constrained inference): minimise
  (b - 1) h^3 - 2 (b + 1) h^2 / 3 with h = ceil(log_b n) over b = 2..n (b = 16 for large n).
  DAWA uses this for its hierarchy over buckets.
* 2-D (the paper's multi-dimensional case: b per dimension, b^2 children per node): a range
  query needs, at level l, the nodes in a frame along its boundary about (f_l - 1) / 2 nodes
  thick (f_l: that level's fan-out per axis) and n_l nodes long (n_l = min(b^l, side): nodes
  per axis), so about (f_l - 1) n_l nodes; each has variance ~h^2 (ε / h per level). We
  minimise h^2 · sum_l (f_l - 1) n_l with h = ceil(log_b side): b = 15, h = 3 on a 1024 x 1024
  grid (levels of 15, 225 and 1024 nodes per axis), next to the 16 that ektelo's HB takes
  there; in our runs b = 16 beat 2, 4, 6, 11 and 32 by 10-50 % (docs/benchmarks/htf.md). The paper's own conclusion applies:
  in 2-D the gain of a hierarchy over a flat grid of cells is much smaller than in 1-D.

Leaves are the cells of the grid (the hierarchy's last level). Unit: a point, or a person with
at most K points — each level's counts then have L1 sensitivity K.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.errors import InputError
from core.privacy import Accountant
from core.spatial.baselines.inputs import check_epsilon, check_matrix, require
from core.spatial.baselines.rectangles import grid_rects
from core.spatial.baselines.tree_counts import variance
from core.spatial.common import count_mechanism, near_equal_edges
from core.spatial.consistency import gls_levels
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

METHOD = "hb"


def _levels_needed(n: int, b: int) -> int:
    """h = ceil(log_b n) in integers (at least 1): the smallest h with b^h >= n."""
    h, reach = 1, b
    while reach < n:
        h, reach = h + 1, reach * b
    return h


def branching_1d(n: int) -> tuple[int, int]:
    """(b, h) minimising the paper's 1-D variance (b-1) h^3 - 2 (b+1) h^2 / 3 (Equation 3).

    For a fixed h the formula grows with b, so only the smallest b reaching n in h levels
    (b^h >= n) is a candidate for each h."""
    n = max(int(n), 1)
    if n <= 2:
        return 2, 1
    best: tuple[int, int, int] | None = None
    for h in range(1, n.bit_length() + 1):
        b = max(2, math.ceil(n ** (1 / h)))
        while b > 2 and (b - 1) ** h >= n:  # float roots can overshoot by one
            b -= 1
        while b**h < n:
            b += 1
        v = 3 * (b - 1) * h**3 - 2 * (b + 1) * h**2  # 3x the formula, in integers
        if best is None or (v, b) < (best[0], best[1]):  # ties: the smaller b
            best = (v, b, h)
    assert best is not None
    return best[1], best[2]


def branching_2d(side: int) -> tuple[int, int]:
    """(b, h) per dimension minimising h^2 · sum_l (f_l - 1) n_l (the 2-D range-query variance,
    module docstring), n_l = min(b^l, side) nodes per axis at level l, f_l = n_l / n_(l-1)."""
    side = max(int(side), 1)
    if side <= 2:
        return 2, 1
    best: tuple[float, int, int] | None = None
    for b in range(2, side + 1):
        h = _levels_needed(side, b)
        n = [min(b**level, side) for level in range(h + 1)]
        v = h * h * sum((n[i] / n[i - 1] - 1) * n[i] for i in range(1, h + 1))
        if best is None or v < best[0]:
            best = (v, b, h)
        if h == 1:
            break
    assert best is not None
    return best[1], best[2]


def nested_edges(length: int, b: int, h: int) -> list[np.ndarray]:
    """Edges of levels 0..h along one dimension: level l+1 splits every interval of level l into
    min(b, its length) near-equal parts (so every level nests in the one above)."""
    levels = [np.array([0, length], dtype=np.int64)]
    for _ in range(h):
        e = levels[-1]
        parts = [e[i] + near_equal_edges(int(e[i + 1] - e[i]), min(b, int(e[i + 1] - e[i])))[:-1]
                 for i in range(len(e) - 1)]  # fmt: skip
        levels.append(np.concatenate([*parts, [length]]).astype(np.int64))
    return levels


def parent_index(parent_edges: np.ndarray, child_edges: np.ndarray) -> np.ndarray:
    """For each child interval, the index of the parent interval that contains it."""
    return np.searchsorted(parent_edges, child_edges[:-1], side="right") - 1


@dataclass(frozen=True)
class Hierarchy:
    """Row and column edges per level (level 0 = the whole domain, unmeasured)."""

    rows: list[np.ndarray]
    cols: list[np.ndarray]

    @property
    def height(self) -> int:
        return len(self.rows) - 1

    def shape(self, level: int) -> tuple[int, int]:
        return len(self.rows[level]) - 1, len(self.cols[level]) - 1

    def parents(self, level: int) -> np.ndarray:
        """Flat index (row-major in level-1) of each level node's parent."""
        pr = parent_index(self.rows[level - 1], self.rows[level])
        pc = parent_index(self.cols[level - 1], self.cols[level])
        return (pr[:, None] * (len(self.cols[level - 1]) - 1) + pc[None, :]).reshape(-1)


def level_counts(F: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """True counts of the grid cells rows x cols (row-major, flat)."""
    if len(rows) - 1 == F.shape[0] and len(cols) - 1 == F.shape[1]:
        return F.reshape(-1).astype(np.int64)
    part = np.add.reduceat(F, rows[:-1], axis=0)
    return np.add.reduceat(part, cols[:-1], axis=1).reshape(-1).astype(np.int64)


def measure_hierarchy(
    F: np.ndarray,
    tree: Hierarchy,
    eps: float,
    accountant: Accountant,
    unit: Unit,
    label: str,
) -> tuple[np.ndarray, list[float]]:
    """Leaf estimates (flat, row-major at the last level) after constrained inference.

    Privacy: each level l = 1..h is one `DiscreteLaplace` over its disjoint nodes with ε / h
    (L1 sensitivity K: a unit's points change that level's counts by at most K in total); the
    levels compose sequentially to ε. Least squares is post-processing.
    """
    h = tree.height
    ys: list[np.ndarray] = [np.zeros(1)]
    vs: list[np.ndarray] = [np.full(1, np.inf)]
    parents: list[np.ndarray] = [np.zeros(1, dtype=np.int64)]
    scales = []
    for level in range(1, h + 1):
        mech = count_mechanism(f"{label} level {level} of {h} (disjoint nodes)", eps / h, unit)
        counts = level_counts(F, tree.rows[level], tree.cols[level])
        ys.append(mech.draw(accountant, counts).astype(np.float64))
        vs.append(np.full(len(counts), variance(mech)))
        parents.append(tree.parents(level))
        scales.append(mech.scale)
    x = gls_levels(parents, ys, vs)
    return x[-1], scales


def build_hb(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    *,
    unit: Unit = POINT,
    branching: int | None = None,
) -> Release:
    """HB on the grid: a b x b-ary hierarchy down to the cells, ε / h per level, least squares.

    Privacy (unit: a point, or a person with at most K points): h `DiscreteLaplace` mechanisms,
    one per level over its disjoint nodes, L1 sensitivity K, ε / h each — eps_tot in total. The
    structure (b, h) depends only on the public grid size. `branching` overrides b (h follows).
    """
    F = check_matrix(F)
    check_epsilon(eps_tot)
    ny, nx = F.shape
    side = max(ny, nx)
    if branching is None:
        b, h = branching_2d(side)
    else:
        if isinstance(branching, bool) or not isinstance(branching, int) or branching < 2:
            raise InputError(f"branching must be a whole number >= 2, got {branching!r}.")
        b, h = int(branching), _levels_needed(side, int(branching))
    require(accountant, METHOD, eps_tot)
    tree = Hierarchy(nested_edges(ny, b, h), nested_edges(nx, b, h))
    values, scales = measure_hierarchy(F, tree, eps_tot, accountant, unit, f"{METHOD}:")
    return Release(
        method=METHOD,
        leaves=grid_rects(tree.rows[-1], tree.cols[-1]),
        values=values,
        epsilon={"total": eps_tot, **{f"level{i}": eps_tot / h for i in range(1, h + 1)}},
        mechanisms=accountant.mechanisms,
        unit=unit,
        params={"eps_tot": eps_tot, "branching": branching},
        info={
            "label": "HB (Qardaji et al. 2013, baseline)",
            "branching_per_axis": b,
            "height": h,
            "count_noise_scale": scales[0] if scales else None,
            "note": "branching and height from the 2-D average range-query variance "
            f"(b h^2 minimal for side {side}); constrained inference on the tree",
        },
    )
