"""HTF's budget plan (paper Eq. 4, 9-10, 17; spec htf.md §2.1-2.7, §2.10.4) and its mechanisms.

`plan_budget` fixes the height and the split of eps_tot into the noisy N, the per-level
partition budget and the geometric count shares. `HTFMechanisms` turns that plan into the
mechanism objects that draw the noise, all declared before the first draw:

* the noisy N: `Laplace`, sensitivity K (a point: K = 1);
* per height i >= 1, the split search: one `LatticeLaplace` of eps_prt_level for the 2T + 1
  evaluations of every node of the level (vector sensitivity (2T + 1) K (2 + lattice); the
  level's nodes are disjoint); the exhaustive search draws, per distinct extent L, a mechanism
  of the same eps_prt_level `in_place_of` the level's planned one;
* per height i, the node counts: `DiscreteLaplace` of eps_i, sensitivity K, planned on the
  accountant; a leaf at height i > 0 spends its remaining path budget rem(i) with a mechanism
  drawn `in_place_of` heights i-1..0 (faithful Alg. 3), and §2.10.1's structural leaves spend
  eps_i + rem(i) `in_place_of` heights i..0. Every root-to-leaf path therefore costs eps_data,
  and the accountant checks every replacement against what it replaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, DiscreteLaplace, Laplace, LatticeLaplace
from core.spatial.common import (
    count_mechanism,
    geometric_shares,
    h_max,
    remaining_path_budget,
    tree_height,
)
from core.spatial.split_search import split_mechanism
from core.spatial.unit import Unit, effective_epsilon


@dataclass(frozen=True)
class BudgetPlan:
    """HTF's height and budget split; `shares[i]` is eps_i, `rem[i]` = sum_{j<i} eps_j."""

    h: int
    eps_height: float
    eps_partition: float
    eps_data: float
    shares: np.ndarray
    rem: np.ndarray

    def __getitem__(self, key: str):  # the older dict form, kept for the trace and pages
        return getattr(self, key)


def plan_budget(n_hat: float | None, eps_tot: float, ny: int, nx: int, p, unit: Unit) -> BudgetPlan:
    """Height and budget split (Eq. 4, 9-10; §2.10.4). Raises if no data budget is left.

    The height formula reads eps_tot / K (a person with at most K points: the counts' noise
    scale is K times a point's), so the tree stops where its noise would swamp its counts."""
    eps_height = 0.0 if p.height is not None else p.eps_height_for(eps_tot)
    if p.height is not None:
        h = min(int(p.height), h_max(ny, nx))
    else:
        h = tree_height(n_hat, effective_epsilon(eps_tot, unit), ny, nx, p.c0)
    if p.cap_height:
        while h > 1 and h * p.eps_prt_level + eps_height > p.max_share * eps_tot:
            h -= 1
    eps_data = eps_tot - eps_height - h * p.eps_prt_level
    if eps_data <= 0:
        raise InputError(
            f"the budget split leaves nothing for the counts: epsilon {eps_tot:g} - eps_height "
            f"{eps_height:g} - height {h} x per-level partition budget {p.eps_prt_level:g} = "
            f"{eps_data:g}. Raise epsilon, lower the partition budget, or enable cap_height."
        )
    shares = geometric_shares(h, eps_data)
    return BudgetPlan(
        h=h,
        eps_height=eps_height,
        eps_partition=h * p.eps_prt_level,
        eps_data=eps_data,
        shares=shares,
        rem=remaining_path_budget(shares),
    )


def height_mechanism(eps_height: float, unit: Unit) -> Laplace:
    """The noisy N that sizes HTF's height (Laplace, sensitivity K)."""
    return Laplace("htf: noisy N (height)", sensitivity=unit.max_points, epsilon=eps_height)


class HTFMechanisms:
    """Every mechanism of one HTF build, created once (the same object for every batch of a
    level) and the replaceable ones planned on the accountant."""

    def __init__(self, plan: BudgetPlan, T: int, eps_prt_level: float, unit: Unit,
                 accountant: Accountant):  # fmt: skip
        self.plan = plan
        self.unit = unit
        self.eps_prt_level = eps_prt_level
        self.counts = tuple(
            count_mechanism(f"htf: node counts, height {i}", float(e), unit)
            for i, e in enumerate(plan.shares)
        )
        self.splits = {
            i: split_mechanism(
                f"htf: split search, height {i} ({2 * T + 1} evaluations per node)",
                2 * T + 1,
                eps_prt_level,
                unit,
            )
            for i in range(1, plan.h + 1)
        }
        accountant.plan([*self.counts, *self.splits.values()])
        self._leaf: dict[int, DiscreteLaplace] = {}
        self._structural: dict[int, DiscreteLaplace] = {}
        self._exhaustive: dict[tuple[int, int], LatticeLaplace] = {}

    @property
    def planned(self) -> tuple:
        return (*self.counts, *self.splits.values())

    def _below(self, top: int) -> tuple[str, ...]:
        return tuple(self.counts[j].label for j in range(top, -1, -1))

    def leaf(self, i: int) -> DiscreteLaplace:
        """A leaf at height i > 0: a fresh count with rem(i), in place of heights i-1..0."""
        if i not in self._leaf:
            self._leaf[i] = count_mechanism(
                f"htf: leaf counts at height {i} (remaining path budget)",
                float(self.plan.rem[i]),
                self.unit,
                in_place_of=self._below(i - 1),
            )
        return self._leaf[i]

    def structural(self, i: int) -> DiscreteLaplace:
        """§2.10.1: a structural stop at height i, measured once with eps_i + rem(i), in place of
        heights i..0."""
        if i not in self._structural:
            self._structural[i] = count_mechanism(
                f"htf: structural leaves at height {i} (whole path budget)",
                float(self.plan.shares[i] + self.plan.rem[i]),
                self.unit,
                in_place_of=self._below(i),
            )
        return self._structural[i]

    def exhaustive(self, i: int, n_evals: int) -> LatticeLaplace:
        """The exhaustive search at height i over n_evals offsets, in place of the level's
        planned search (same eps_prt_level; nodes of one extent share the object)."""
        key = (i, n_evals)
        if key not in self._exhaustive:
            self._exhaustive[key] = split_mechanism(
                f"htf: exhaustive split search, height {i}, {n_evals} offsets",
                n_evals,
                self.eps_prt_level,
                self.unit,
                in_place_of=(self.splits[i].label,),
            )
        return self._exhaustive[key]
