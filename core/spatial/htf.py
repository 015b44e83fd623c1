"""HTF — Homogeneous Tree Framework (Shaham et al., SIGSPATIAL 2021), spec htf.md §2.

Lazy form (§2.8): the tree is grown level by level; a node is split only after its noisy
count y1 shows that it survives pruning (Algorithm 3), so pruned subtrees never cost a split
search. Level-by-level order lets each level's count noise come from one vector draw.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, Cost
from core.spatial.common import N_SHARE
from core.spatial.consistency import combine_measurements, gls_levels
from core.spatial.htf_budget import BudgetPlan, HTFMechanisms, height_mechanism, plan_budget
from core.spatial.htf_trace import HTFTrace, LevelTrace, node_fates, split_traces
from core.spatial.release import Release
from core.spatial.split_search import (
    FastObjective,
    exhaustive_split_offset,
    level_split_offsets,
    split_draws,
)
from core.spatial.unit import POINT, Unit

__all__ = ["BudgetPlan", "HTFParams", "build_htf", "plan_budget"]


@dataclass(frozen=True)
class HTFParams:
    """HTF's parameters; the defaults are the paper's (preset `htf_paper`, spec §2.9).

    `eps_height` = 1e-4 is the paper's fixed budget for the noisy N (faithful HTF keeps it, and
    says so); None spends the share `N_SHARE` of eps_tot instead (the improved variants: a
    fixed 1e-4 puts Laplace noise of scale 10,000 on N whatever ε, see core/spatial/common.py).
    """

    eps_height: float | None = 1e-4
    eps_prt_level: float = 1e-3
    T: int = 3
    stop_count: float = 100
    stop_cells: int = 5
    c0: float = 10.0
    even_axis: str = "y"
    split_search: str = "binary"  # or "exhaustive" (paper §4.1.1)
    height: int | None = None  # None = the noisy-N formula; an int fixes h (no eps_height spent)
    combine_pruned: bool = False  # §2.10.1
    consistency: bool = False  # §2.10.2
    cap_height: bool = False  # §2.10.4
    max_share: float = 0.5

    @property
    def modified(self) -> list[str]:
        """Active §2.10 improvements (the UI then labels the release "HTF (modified)")."""
        return [f for f in ("combine_pruned", "consistency", "cap_height") if getattr(self, f)]

    def eps_height_for(self, eps_tot: float) -> float:
        """The noisy N's budget: the fixed eps_height, or N_SHARE x eps_tot when it is None."""
        return N_SHARE * float(eps_tot) if self.eps_height is None else float(self.eps_height)

    def validate(self, eps_tot: float) -> None:
        if not (eps_tot > 0 and math.isfinite(eps_tot)):
            raise InputError(f"epsilon must be a positive number, got {eps_tot}.")
        if self.height is None and self.eps_height is not None and not self.eps_height > 0:
            raise InputError(f"eps_height must be > 0 (or fix the height), got {self.eps_height}.")
        if not self.eps_prt_level > 0:
            raise InputError(
                f"the per-level partition budget must be > 0, got {self.eps_prt_level}."
            )
        if not (isinstance(self.T, int | np.integer) and self.T >= 1):
            raise InputError(f"T (split-search iterations) must be an integer >= 1, got {self.T}.")
        if self.stop_cells < 1:
            raise InputError(f"stop_cells must be >= 1, got {self.stop_cells}.")
        if self.even_axis not in ("y", "x"):
            raise InputError(f"even_axis must be 'y' or 'x', got {self.even_axis!r}.")
        if self.split_search not in ("binary", "exhaustive"):
            raise InputError(
                f"split_search must be 'binary' or 'exhaustive', got {self.split_search!r}."
            )
        if self.height is not None and self.height < 1:
            raise InputError(f"a fixed height must be >= 1, got {self.height}.")
        # the least any tree spends before its counts: the noisy N, then one level's partition
        # (the height is at least 1); a tree that cannot have counts is refused here, before a
        # charge, not by the budget split after it
        least = (0.0 if self.height is not None else self.eps_height_for(eps_tot))
        least += self.eps_prt_level
        if not eps_tot > least:
            raise InputError(
                f"epsilon {eps_tot:g} leaves nothing for the counts: the noisy N (eps_height "
                f"{0.0 if self.height is not None else self.eps_height_for(eps_tot):g}) and one "
                f"level's partition ({self.eps_prt_level:g}) already take {least:g}. Fix: give "
                f"--epsilon above {least:g}, or smaller --eps-height / --eps-prt-level."
            )


def _counts(S: np.ndarray, R: np.ndarray) -> np.ndarray:
    """count(R) for many rectangles from the int64 summed-area table S (shape (ny+1, nx+1))."""
    r0, r1, c0, c1 = R[:, 0], R[:, 1], R[:, 2], R[:, 3]
    return S[r1, c1] - S[r0, c1] - S[r1, c0] + S[r0, c0]


def summed_area(F: np.ndarray) -> np.ndarray:
    S = np.zeros((F.shape[0] + 1, F.shape[1] + 1), dtype=np.int64)
    np.cumsum(np.cumsum(F, axis=0, dtype=np.int64), axis=1, out=S[1:, 1:])
    return S


def choose_axes(R: np.ndarray, i: int, even_axis: str) -> np.ndarray:
    """Per node: 0 = split rows (y), 1 = split columns (x), -1 = no split (§2.3 with fallback)."""
    ext_y = R[:, 1] - R[:, 0]
    ext_x = R[:, 3] - R[:, 2]
    if i == 0:
        return np.full(len(R), -1)
    want_y = (i % 2 == 0) == (even_axis == "y")
    first, other, e_first, e_other = (0, 1, ext_y, ext_x) if want_y else (1, 0, ext_x, ext_y)
    return np.where(e_first >= 2, first, np.where(e_other >= 2, other, -1))


def split_children(nodes: np.ndarray, axes: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Children (2m, 4) of m nodes split at `offsets` (0 = rows/y, 1 = columns/x); pairs in order."""
    r0, r1, c0, c1 = nodes[:, 0], nodes[:, 1], nodes[:, 2], nodes[:, 3]
    y = axes == 0
    first = np.stack([r0, np.where(y, r0 + offsets, r1), c0, np.where(y, c1, c0 + offsets)], 1)
    second = np.stack([np.where(y, r0 + offsets, r0), r1, np.where(y, c0, c0 + offsets), c1], 1)
    out = np.empty((2 * len(nodes), 4), dtype=np.int64)
    out[0::2], out[1::2] = first, second
    return out


def build_htf(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    trace: HTFTrace | None = None,
    *,
    unit: Unit = POINT,
    **params,
) -> Release:
    """Release an HTF histogram of the frequency matrix F with total budget eps_tot.

    Privacy (unit: a point, or a person with at most K points; add/remove): eps_height on the
    noisy N (Laplace, sensitivity K), eps_prt_level per level on the split search (2T + 1
    evaluations of sensitivity < 2K each, lattice Laplace, parallel over the level's disjoint
    nodes), and the geometric count shares on each root-to-leaf path (discrete Laplace,
    sensitivity K, parallel within a level; replacements per path): eps_tot in total. The
    mechanisms are `HTFMechanisms` (core/spatial/htf_budget.py).
    `trace`, if given, is filled level by level by this same code (see core/spatial/htf_trace.py).
    """
    p = HTFParams(**params)
    p.validate(eps_tot)
    F = np.asarray(F)
    if F.ndim != 2 or not np.issubdtype(F.dtype, np.integer):
        raise ValueError("F must be a 2-D integer frequency matrix")
    ny, nx = F.shape
    # refuse before any draw if the whole release cannot fit the accountant's charge
    accountant.require(Cost(float(eps_tot)), "htf (the whole release, worst case over paths)")
    S = summed_area(F)
    n_hat = None
    if p.height is None:
        n_hat = float(height_mechanism(p.eps_height_for(eps_tot), unit).draw(accountant, S[-1, -1]))
    plan = plan_budget(n_hat, eps_tot, ny, nx, p, unit)  # a refusal here is recorded: N drew
    mech = HTFMechanisms(plan, p.T, p.eps_prt_level, unit, accountant)

    h, shares = plan.h, plan.shares
    if trace is not None:
        trace.start(plan, eps_tot, p.stop_count, p.stop_cells)
    fast = FastObjective(F, S)
    leaves: list[np.ndarray] = []
    values: list[np.ndarray] = []
    heights: list[np.ndarray] = []
    stds: list[np.ndarray] = []  # std of each released leaf value's noise (before consistency)
    expanded: list[np.ndarray] = []  # split nodes (r0, r1, c0, c1, height): implied by the leaves
    tree = _TreeLog() if p.consistency else None

    nodes = np.array([[0, ny, 0, nx]], dtype=np.int64)
    parents = np.array([-1])
    for i in range(h, -1, -1):
        if len(nodes) == 0:
            break
        cnt = _counts(S, nodes)
        cells = (nodes[:, 1] - nodes[:, 0]) * (nodes[:, 3] - nodes[:, 2])
        axes = choose_axes(nodes, i, p.even_axis)
        structural = (axes < 0) | (cells < p.stop_cells)  # stop that does not depend on y1
        y1 = np.full(len(nodes), np.nan)
        measure = ~structural if p.combine_pruned else np.ones(len(nodes), bool)
        if measure.any():
            y1[measure] = mech.counts[i].draw(accountant, cnt[measure])
        leaf = structural | (y1 <= p.stop_count)
        val = _leaf_values(cnt, y1, leaf, structural, i, p, mech, accountant)

        if tree is not None:
            tree.add(parents, y1, leaf, val, structural, i, p, mech)
        leaves.append(nodes[leaf])
        values.append(val[leaf])
        stds.append(_leaf_noise_std(structural[leaf], i, p.combine_pruned, mech))
        heights.append(np.full(int(leaf.sum()), i))

        grow = np.flatnonzero(~leaf)
        expanded.append(np.column_stack([nodes[grow], np.full(len(grow), i)]))
        g_nodes, g_axes = nodes[grow], axes[grow]
        record = {} if trace is not None and p.split_search == "binary" else None
        if not len(grow):
            offsets = np.zeros(0, dtype=np.int64)
        elif p.split_search == "binary":
            # the level's split noise in one vector draw (2T + 1 fresh values per node), then
            # Algorithm 1 for all of the level's nodes at once
            k = 2 * p.T + 1
            level_draws = split_draws(mech.splits[i], accountant, (len(grow), k))
            offsets = level_split_offsets(g_nodes, g_axes, level_draws, p.T, fast, record)
        else:
            offsets = np.array(
                [
                    exhaustive_split_offset(
                        F[r0:r1, c0:c1],
                        "y" if ax == 0 else "x",
                        lambda n, i=i: mech.exhaustive(i, n),
                        accountant,
                    )  # fmt: skip
                    for (r0, r1, c0, c1), ax in zip(g_nodes, g_axes, strict=True)
                ],
                dtype=np.int64,
            )
        if trace is not None:
            _trace_level(trace, i, nodes, y1, leaf, structural, val, grow, g_axes, offsets,
                         record, plan, p, mech)  # fmt: skip
        children = split_children(g_nodes, g_axes, offsets)
        nodes = children
        parents = np.repeat(grow, 2)  # children's parent index within this level

    leaves_arr = np.concatenate(leaves)
    values_arr = np.concatenate(values).astype(np.float64)
    if tree is not None:
        values_arr = tree.consistent_leaf_values()
    name = "htf" if not p.modified else "htf+"
    return Release(
        method=name,
        leaves=leaves_arr,
        values=values_arr,
        epsilon={
            "total": float(eps_tot),
            "height": plan.eps_height,
            "partition": plan.eps_partition,
            "data": plan.eps_data,
        },
        mechanisms=accountant.mechanisms,
        planned=mech.planned,
        unit=unit,
        params={**asdict(p), "eps_height": plan.eps_height, "eps_tot": float(eps_tot)},
        info={
            "height": h,
            "label": _label(p),
            "modified": p.modified,
            "budget_note": PAPER_BUDGET_NOTE
            if p.eps_height is not None
            else (
                f"noisy N with {N_SHARE:.0%} of epsilon (improved variant); "
                f"eps_prt_level = {p.eps_prt_level:g} per split level"
            ),
            "leaf_heights": np.concatenate(heights),
            # GLS mixes measurements across the tree: no per-leaf Laplace std is stated then
            "leaf_noise_std": None if p.consistency else np.concatenate(stds),
            "eps_shares": shares.tolist(),
            "expanded": np.concatenate(expanded) if expanded else np.empty((0, 5), np.int64),
        },
    )


def _label(p: HTFParams) -> str:
    return "HTF" if not p.modified else "HTF (modified: " + ", ".join(p.modified) + ")"


PAPER_BUDGET_NOTE = (
    "the paper's fixed budgets: eps_height = 1e-4 for the noisy N and eps_prt_level = 1e-3 per "
    "split level, whatever epsilon (faithful HTF, spec §2.9)"
)


def _trace_level(trace, i, nodes, y1, leaf, structural, val, grow, axes, offsets, record,
                 plan: BudgetPlan, p: HTFParams, mech: HTFMechanisms) -> None:  # fmt: skip
    """Append level i to the trace (worst-case budget spent once the level is done)."""
    h = plan.h
    n_split_levels = h - i + 1 if i >= 1 else h
    spent = plan.eps_height + float(np.sum(plan.shares[i:])) + n_split_levels * p.eps_prt_level
    trace.levels.append(
        LevelTrace(
            height=i,
            nodes=nodes.copy(),
            noisy_counts=y1.copy(),
            fates=node_fates(leaf, structural, i),
            released_values=np.where(leaf, val, np.nan),
            splits=split_traces(grow, axes, offsets, record),
            epsilon_spent=min(spent, trace.epsilon_total),
            count_scale=float(mech.counts[i].scale),
            split_scale=float(mech.splits[i].scale) if i >= 1 else None,
        )
    )


def _leaf_values(cnt, y1, leaf, structural, i: int, p: HTFParams, mech: HTFMechanisms,
                 accountant: Accountant) -> np.ndarray:  # fmt: skip
    """Released values of the level's leaves (Alg. 3, or §2.10.1 when combine_pruned)."""
    eps_i, rem_i = float(mech.plan.shares[i]), float(mech.plan.rem[i])
    val = np.full(len(cnt), np.nan)
    if not leaf.any():
        return val
    if not p.combine_pruned:
        if rem_i > 0:
            val[leaf] = mech.leaf(i).draw(accountant, cnt[leaf])  # faithful: y1 discarded
        else:
            val[leaf] = y1[leaf]  # height 0: the whole path budget is used
        return val
    # structural stops never looked at y1: one measurement with eps_i + rem(i)
    if structural.any():
        val[structural] = mech.structural(i).draw(accountant, cnt[structural])
    pruned = leaf & ~structural
    if pruned.any():
        if rem_i > 0:
            y2 = mech.leaf(i).draw(accountant, cnt[pruned])
            w1, w2 = eps_i**2, rem_i**2
            val[pruned] = (w1 * y1[pruned] + w2 * y2) / (w1 + w2)
        else:
            val[pruned] = y1[pruned]
    return val


def _leaf_noise_std(structural: np.ndarray, i: int, combine: bool, mech: HTFMechanisms
                    ) -> np.ndarray:  # fmt: skip
    """Std of the noise in each leaf value released at height i (Laplace(b) has std sqrt(2) b;
    b = K / eps for a unit of K points)."""
    k = mech.unit.max_points
    eps_i, rem_i = float(mech.plan.shares[i]), float(mech.plan.rem[i])
    if rem_i == 0:  # height 0: the value is y1
        return np.full(len(structural), math.sqrt(2) * k / eps_i)
    if not combine:  # faithful: a fresh measurement with rem(i)
        return np.full(len(structural), math.sqrt(2) * k / rem_i)
    return np.where(
        structural,
        math.sqrt(2) * k / (eps_i + rem_i),
        k * math.sqrt(2 / (eps_i**2 + rem_i**2)),
    )


class _TreeLog:
    """Measured nodes of the lazy tree, level by level, for GLS consistency (§2.10.2, §3.9)."""

    def __init__(self):
        self.parents: list[np.ndarray] = []
        self.y: list[np.ndarray] = []
        self.var: list[np.ndarray] = []
        self.is_leaf: list[np.ndarray] = []

    def add(self, parents, y1, leaf, val, structural, i: int, p, mech: HTFMechanisms) -> None:
        """Record one level; `parents` index the previous level's nodes."""
        eps_i, rem_i = float(mech.plan.shares[i]), float(mech.plan.rem[i])
        k2 = float(mech.unit.max_points) ** 2  # variances 2 K^2 / eps^2
        measured = ~np.isnan(y1)
        y = np.where(measured, y1, 0.0).astype(float)
        var = np.where(measured, 2.0 * k2 / eps_i**2, np.inf)
        if p.combine_pruned:
            # the released value already combines every measurement of the node optimally
            v_leaf = np.where(
                structural, 2.0 * k2 / (eps_i + rem_i) ** 2, 2.0 * k2 / (eps_i**2 + rem_i**2)
            )
            if rem_i == 0:
                v_leaf = np.full(len(y), 2.0 * k2 / eps_i**2)
            y = np.where(leaf, val, y)
            var = np.where(leaf, v_leaf, var)
        elif rem_i > 0:
            extra = leaf & measured  # a fresh y2 with rem(i): a second measurement of the node
            y2 = np.where(extra, val, 0.0)
            var2 = np.where(extra, 2.0 * k2 / rem_i**2, np.inf)
            y, var = combine_measurements(y, var, y2, var2)
        self.parents.append(np.asarray(parents, dtype=np.int64))
        self.y.append(y)
        self.var.append(var)
        self.is_leaf.append(np.asarray(leaf))

    def consistent_leaf_values(self) -> np.ndarray:
        x = gls_levels(self.parents, self.y, self.var)
        return np.concatenate([xd[lf] for xd, lf in zip(x, self.is_leaf, strict=True)])
