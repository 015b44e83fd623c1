"""Count budgets and measurements shared by the level-wise trees (QuadTree, kd-tree).

A tree of height h measures every node: a node of height i gets eps_i (geometric, spec §2.7, or
uniform eps/(h+1)); a leaf that cannot split at height i > 0 measures once with eps_i + rem(i),
so every root-to-leaf path spends exactly the count budget. Optional GLS (§3.9) makes parents
equal the sums of their children and releases the adjusted leaves.

Mechanisms (`CountPlan`): one `DiscreteLaplace` per height i (sensitivity K: a unit's points
fall in disjoint nodes of a level), drawn in one batch per level and planned on the
accountant; an unsplittable leaf at height i > 0 draws a mechanism of ε_i + rem(i) `in_place_of`
heights i..0, an early-stopped leaf re-measures with rem(i) `in_place_of` heights i-1..0, so a
root-to-leaf path never costs more than the count budget (the accountant checks each
replacement against what it replaces).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, DiscreteLaplace
from core.spatial.baselines.rectangles import rect_counts
from core.spatial.common import count_mechanism, geometric_shares, remaining_path_budget
from core.spatial.consistency import gls_levels
from core.spatial.unit import Unit

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


class CountPlan:
    """The count mechanisms of one tree (heights 0..h), created once so that every batch of a
    level draws through the same object (disjoint nodes: parallel composition)."""

    def __init__(self, method: str, shares: np.ndarray, unit: Unit, accountant: Accountant):
        self.method = method
        self.shares = np.asarray(shares, dtype=np.float64)
        self.rem = remaining_path_budget(self.shares)
        self.unit = unit
        self.levels = tuple(
            count_mechanism(f"{method}: node counts, height {i}", float(e), unit)
            for i, e in enumerate(self.shares)
        )
        accountant.plan(self.levels)
        self._rest: dict[int, DiscreteLaplace] = {}
        self._remainder: dict[int, DiscreteLaplace] = {}

    def level(self, i: int) -> DiscreteLaplace:
        return self.levels[i]

    def _labels(self, top: int) -> tuple[str, ...]:
        return tuple(self.levels[j].label for j in range(top, -1, -1))

    def rest(self, i: int) -> DiscreteLaplace:
        """A leaf at height i > 0 measured once with ε_i + rem(i), in place of heights i..0."""
        if i not in self._rest:
            self._rest[i] = count_mechanism(
                f"{self.method}: leaf counts at height {i} (the rest of the path budget)",
                float(self.shares[i] + self.rem[i]),
                self.unit,
                in_place_of=self._labels(i),
            )
        return self._rest[i]

    def remainder(self, i: int) -> DiscreteLaplace:
        """A leaf stopped at height i > 0 re-measured with rem(i), in place of heights i-1..0."""
        if i not in self._remainder:
            self._remainder[i] = count_mechanism(
                f"{self.method}: leaf re-measure at height {i} (remaining path budget)",
                float(self.rem[i]),
                self.unit,
                in_place_of=self._labels(i - 1),
            )
        return self._remainder[i]


def variance(mechanism: DiscreteLaplace) -> float:
    """Noise variance used by GLS: 2 b^2 for scale b (the continuous Laplace value; the discrete
    one is slightly smaller, which only changes GLS weights by a common factor)."""
    return 2.0 * float(mechanism.scale) ** 2


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
    plan: CountPlan,
    accountant: Accountant,
) -> tuple[np.ndarray, np.ndarray]:
    """Noisy counts of one depth's nodes (height i) and their variances 2 b^2.

    Leaves above height 0 (unsplittable nodes) measure once with eps_i + rem(i) (`plan.rest`).
    """
    counts = rect_counts(P, rects)
    y = np.empty(len(rects), dtype=np.float64)
    var = np.empty(len(rects), dtype=np.float64)
    own = leaf & (i > 0)
    for mask, mech in ((~own, plan.level(i)), (own, plan.rest(i) if i > 0 else None)):
        if mech is not None and mask.any():
            y[mask] = mech.draw(accountant, counts[mask])
            var[mask] = variance(mech)
    return y, var
