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
from core.privacy import BudgetLedger, Noise, make_spend
from core.spatial.common import (
    geometric_shares,
    h_max,
    remaining_path_budget,
    tree_height,
)
from core.spatial.consistency import combine_measurements, gls_levels
from core.spatial.htf_trace import HTFTrace, LevelTrace, node_fates, split_traces
from core.spatial.release import Release
from core.spatial.split_search import (
    FastObjective,
    exhaustive_split_offset,
    level_split_offsets,
    split_draws,
    split_noise_scale,
)


@dataclass(frozen=True)
class HTFParams:
    """HTF's parameters; the defaults are the paper's (preset `htf_paper`, spec §2.9)."""

    eps_height: float = 1e-4
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

    def validate(self, eps_tot: float) -> None:
        if not (eps_tot > 0 and math.isfinite(eps_tot)):
            raise InputError(f"epsilon must be a positive number, got {eps_tot}.")
        if self.height is None and not self.eps_height > 0:
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


def plan_budget(n_hat: float | None, eps_tot: float, ny: int, nx: int, p: HTFParams) -> dict:
    """Height and budget split (Eq. 4, 9-10; §2.10.4). Raises if no data budget is left."""
    eps_height = 0.0 if p.height is not None else p.eps_height
    if p.height is not None:
        h = min(int(p.height), h_max(ny, nx))
    else:
        h = tree_height(n_hat, eps_tot, ny, nx, p.c0)
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
    return {
        "h": h,
        "eps_height": eps_height,
        "eps_partition": h * p.eps_prt_level,
        "eps_data": eps_data,
        "shares": shares,
        "rem": remaining_path_budget(shares),
    }


def ledger_plan(plan: dict, p: HTFParams, eps_tot: float, scope: str = "htf") -> list:
    """HTF's planned worst-case spends (spec §7); they sum to eps_tot.

    `scope` prefixes the parallel groups; it must be unique on the ledger (`BudgetLedger.scope`).
    """
    h = plan["h"]
    spends = []
    if plan["eps_height"] > 0:
        spends.append(make_spend("htf: noisy N (height)", "number of points", plan["eps_height"]))
    for i in range(h, 0, -1):
        spends.append(
            make_spend(
                f"htf: split search, height {i} ({2 * p.T + 1} evaluations)",
                "split positions (parallel over the level's nodes)",
                p.eps_prt_level,
                composition="parallel",
                group=f"{scope}-partition-height-{i}",
            )
        )
    for i in range(h, -1, -1):
        note = "; a node pruned here spends rem(i) instead of the deeper shares" if i > 0 else ""
        spends.append(
            make_spend(
                f"htf: counts, height {i}",
                f"node counts (parallel over the level's nodes){note}",
                float(plan["shares"][i]),
                composition="parallel",
                group=f"{scope}-counts-height-{i}",
            )
        )
    return spends


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
    noise: Noise,
    ledger: BudgetLedger,
    trace: HTFTrace | None = None,
    **params,
) -> Release:
    """Release an HTF histogram of the frequency matrix F with total budget eps_tot.

    Privacy (one point, add/remove): eps_height on the noisy N (sensitivity 1), eps_prt_level
    per level on the split search (2T + 1 evaluations of sensitivity < 2 each, parallel over the
    level's disjoint nodes), and the geometric count shares on each root-to-leaf path (sensitivity
    1, parallel within a level): eps_tot in total (spec §2, ledgered in `ledger_plan`).
    `trace`, if given, is filled level by level by this same code (see core/spatial/htf_trace.py).
    """
    p = HTFParams(**params)
    p.validate(eps_tot)
    F = np.asarray(F)
    if F.ndim != 2 or not np.issubdtype(F.dtype, np.integer):
        raise ValueError("F must be a 2-D integer frequency matrix")
    ny, nx = F.shape
    # refuse before any draw if the whole release cannot fit the ledger's remaining budget
    ledger.check([make_spend("htf", "the whole release (worst case over paths)", float(eps_tot))])
    S = summed_area(F)
    n_hat = None
    if p.height is None:
        # drawn before the ledger entry so the plan can use it; recorded atomically below
        n_hat = float(S[-1, -1]) + noise.laplace(1.0 / p.eps_height)
    try:
        plan = plan_budget(n_hat, eps_tot, ny, nx, p)
    except InputError:
        if n_hat is not None:  # the refusal (and the h it names) depends on N_hat: ledger it
            ledger.spend("htf: noisy N (height); release refused", "number of points", p.eps_height)
        raise
    ledger.spend_all(ledger_plan(plan, p, eps_tot, ledger.scope("htf")))

    h, shares, rem = plan["h"], plan["shares"], plan["rem"]
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
        y1[measure] = noise.add_laplace(cnt[measure], 1.0 / shares[i])
        leaf = structural | (y1 <= p.stop_count)
        val = _leaf_values(cnt, y1, leaf, structural, shares[i], rem[i], p, noise)

        if tree is not None:
            tree.add(parents, y1, shares[i], leaf, val, rem[i], structural, p)
        leaves.append(nodes[leaf])
        values.append(val[leaf])
        stds.append(_leaf_noise_std(structural[leaf], shares[i], rem[i], p.combine_pruned))
        heights.append(np.full(int(leaf.sum()), i))

        grow = np.flatnonzero(~leaf)
        expanded.append(np.column_stack([nodes[grow], np.full(len(grow), i)]))
        g_nodes, g_axes = nodes[grow], axes[grow]
        if p.split_search == "binary":
            # the level's split noise in one vector draw (2T + 1 fresh values per node), then
            # Algorithm 1 for all of the level's nodes at once
            k = 2 * p.T + 1
            level_draws = split_draws(noise, k, p.eps_prt_level, (len(grow), k))
            record = {} if trace is not None else None
            offsets = level_split_offsets(g_nodes, g_axes, level_draws, p.T, fast, record)
        else:
            offsets = np.array(
                [
                    exhaustive_split_offset(
                        F[r0:r1, c0:c1], "y" if ax == 0 else "x", p.eps_prt_level, noise
                    )
                    for (r0, r1, c0, c1), ax in zip(g_nodes, g_axes, strict=True)
                ],
                dtype=np.int64,
            )
        if trace is not None:
            _trace_level(trace, i, nodes, y1, leaf, structural, val, grow, g_axes, offsets,
                         record if p.split_search == "binary" else None, shares, plan, p)  # fmt: skip
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
            "height": plan["eps_height"],
            "partition": plan["eps_partition"],
            "data": plan["eps_data"],
        },
        ledger=ledger,
        params={**asdict(p), "eps_tot": float(eps_tot)},
        info={
            "height": h,
            "label": "HTF" if not p.modified else "HTF (modified: " + ", ".join(p.modified) + ")",
            "modified": p.modified,
            "leaf_heights": np.concatenate(heights),
            # GLS mixes measurements across the tree: no per-leaf Laplace std is stated then
            "leaf_noise_std": None if p.consistency else np.concatenate(stds),
            "eps_shares": shares.tolist(),
            "expanded": np.concatenate(expanded) if expanded else np.empty((0, 5), np.int64),
        },
    )


def _trace_level(trace, i, nodes, y1, leaf, structural, val, grow, axes, offsets, record,
                 shares, plan, p: HTFParams) -> None:  # fmt: skip
    """Append level i to the trace (worst-case budget spent once the level is done)."""
    h = plan["h"]
    n_split_levels = h - i + 1 if i >= 1 else h
    spent = plan["eps_height"] + float(np.sum(shares[i:])) + n_split_levels * p.eps_prt_level
    trace.levels.append(
        LevelTrace(
            height=i,
            nodes=nodes.copy(),
            noisy_counts=y1.copy(),
            fates=node_fates(leaf, structural, i),
            released_values=np.where(leaf, val, np.nan),
            splits=split_traces(grow, axes, offsets, record),
            epsilon_spent=min(spent, trace.epsilon_total),
            count_scale=1.0 / float(shares[i]),
            split_scale=split_noise_scale(2 * p.T + 1, p.eps_prt_level) if i >= 1 else None,
        )
    )


def _leaf_values(cnt, y1, leaf, structural, eps_i, rem_i, p: HTFParams, noise: Noise) -> np.ndarray:
    """Released values of the level's leaves (Alg. 3, or §2.10.1 when combine_pruned)."""
    val = np.full(len(cnt), np.nan)
    if not leaf.any():
        return val
    if not p.combine_pruned:
        if rem_i > 0:
            val[leaf] = noise.add_laplace(cnt[leaf], 1.0 / rem_i)  # faithful: y1 discarded
        else:
            val[leaf] = y1[leaf]  # height 0: the whole path budget is used
        return val
    # structural stops never looked at y1: one measurement with eps_i + rem(i)
    if structural.any():
        val[structural] = noise.add_laplace(cnt[structural], 1.0 / (eps_i + rem_i))
    pruned = leaf & ~structural
    if pruned.any():
        if rem_i > 0:
            y2 = noise.add_laplace(cnt[pruned], 1.0 / rem_i)
            w1, w2 = eps_i**2, rem_i**2
            val[pruned] = (w1 * y1[pruned] + w2 * y2) / (w1 + w2)
        else:
            val[pruned] = y1[pruned]
    return val


def _leaf_noise_std(
    structural: np.ndarray, eps_i: float, rem_i: float, combine: bool
) -> np.ndarray:
    """Std of the noise in each leaf value released at height i (Laplace(b) has std sqrt(2) b)."""
    if rem_i == 0:  # height 0: the value is y1
        return np.full(len(structural), math.sqrt(2) / eps_i)
    if not combine:  # faithful: a fresh measurement with rem(i)
        return np.full(len(structural), math.sqrt(2) / rem_i)
    return np.where(
        structural, math.sqrt(2) / (eps_i + rem_i), math.sqrt(2 / (eps_i**2 + rem_i**2))
    )


class _TreeLog:
    """Measured nodes of the lazy tree, level by level, for GLS consistency (§2.10.2, §3.9)."""

    def __init__(self):
        self.parents: list[np.ndarray] = []
        self.y: list[np.ndarray] = []
        self.var: list[np.ndarray] = []
        self.is_leaf: list[np.ndarray] = []

    def add(self, parents, y1, eps_i, leaf, val, rem_i, structural, p) -> None:
        """Record one level; `parents` index the previous level's nodes."""
        measured = ~np.isnan(y1)
        y = np.where(measured, y1, 0.0).astype(float)
        var = np.where(measured, 2.0 / eps_i**2, np.inf)
        if p.combine_pruned:
            # the released value already combines every measurement of the node optimally
            v_leaf = np.where(structural, 2.0 / (eps_i + rem_i) ** 2, 2.0 / (eps_i**2 + rem_i**2))
            if rem_i == 0:
                v_leaf = np.full(len(y), 2.0 / eps_i**2)
            y = np.where(leaf, val, y)
            var = np.where(leaf, v_leaf, var)
        elif rem_i > 0:
            extra = leaf & measured  # a fresh y2 with rem(i): a second measurement of the node
            y2 = np.where(extra, val, 0.0)
            var2 = np.where(extra, 2.0 / rem_i**2, np.inf)
            y, var = combine_measurements(y, var, y2, var2)
        self.parents.append(np.asarray(parents, dtype=np.int64))
        self.y.append(y)
        self.var.append(var)
        self.is_leaf.append(np.asarray(leaf))

    def consistent_leaf_values(self) -> np.ndarray:
        x = gls_levels(self.parents, self.y, self.var)
        return np.concatenate([xd[lf] for xd, lf in zip(x, self.is_leaf, strict=True)])
