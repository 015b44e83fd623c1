"""Count budgets and measurements shared by the level-wise trees (QuadTree, kd-tree).

A tree of height h measures every node: a node of height i gets eps_i (geometric, spec §2.7, or
uniform eps/(h+1)); a leaf that cannot split at height i > 0 measures once with eps_i + rem(i),
so every root-to-leaf path spends exactly the count budget. Optional GLS (§3.9) makes parents
equal the sums of their children and releases the adjusted leaves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.errors import InputError
from core.privacy import Noise
from core.spatial.baselines.rectangles import rect_counts
from core.spatial.common import geometric_shares, remaining_path_budget
from core.spatial.consistency import gls_levels

COUNT_BUDGETS = ("geometric", "uniform")


def count_shares(h: int, eps_count: float, count_budget: str) -> np.ndarray:
    """eps_i for heights i = 0..h, summing to eps_count."""
    if count_budget == "geometric":
        return geometric_shares(h, eps_count)
    if count_budget == "uniform":
        return np.full(h + 1, eps_count / (h + 1))
    raise InputError(
        f"count_budget must be one of {', '.join(COUNT_BUDGETS)}, got {count_budget!r}."
    )


def laplace_counts(noise: Noise, counts: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """counts + discrete Laplace(1/eps) per entry, one vectorised draw per distinct eps."""
    if len(eps) and eps.min() == eps.max():
        return noise.add_laplace(counts, 1.0 / eps[0]).astype(np.float64)
    out = np.empty(len(counts), dtype=np.float64)
    for e in np.unique(eps):
        m = eps == e
        out[m] = noise.add_laplace(counts[m], 1.0 / e)
    return out


@dataclass
class MeasuredLevels:
    """Nodes by depth: rectangles, parent index into the level above, measurement(s), leaf flags."""

    rects: list[np.ndarray] = field(default_factory=list)
    parents: list[np.ndarray] = field(default_factory=list)
    y: list[np.ndarray] = field(default_factory=list)  # all measurements combined (for GLS)
    var: list[np.ndarray] = field(default_factory=list)
    leaf: list[np.ndarray] = field(default_factory=list)
    leaf_value: list[np.ndarray] = field(default_factory=list)  # released value without GLS

    def add(self, rects, parents, y, var, leaf, leaf_value) -> None:
        self.rects.append(rects)
        self.parents.append(parents)
        self.y.append(y)
        self.var.append(var)
        self.leaf.append(leaf)
        self.leaf_value.append(leaf_value)

    @property
    def n_nodes(self) -> int:
        return int(sum(len(r) for r in self.rects))

    def release(self, consistency: bool) -> tuple[np.ndarray, np.ndarray]:
        """(leaf rectangles, leaf values): GLS-adjusted if `consistency`, else the raw leaf values."""
        vals = gls_levels(self.parents, self.y, self.var) if consistency else self.leaf_value
        leaves = np.concatenate([_pick(r, m) for r, m in zip(self.rects, self.leaf, strict=True)])
        values = np.concatenate([_pick(v, m) for v, m in zip(vals, self.leaf, strict=True)])
        return leaves, values


def _pick(a: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return a if mask.all() else a[mask]


def measure_level(
    P: np.ndarray,
    rects: np.ndarray,
    leaf: np.ndarray,
    i: int,
    shares: np.ndarray,
    noise: Noise,
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy counts of one depth's nodes (height i) and their variances 2/eps^2.

    Leaves above height 0 (unsplittable nodes) measure once with eps_i + rem(i).
    """
    rem_i = float(remaining_path_budget(shares)[i])
    eps = np.where(leaf & (i > 0), shares[i] + rem_i, shares[i])
    y = laplace_counts(noise, rect_counts(P, rects), eps)
    return y, 2.0 / eps**2
