"""HTF step by step: a typed record of each level of the build, filled by `build_htf` itself.

Pass `trace=HTFTrace()` to `build_htf`; the same code path that makes the release appends one
`LevelTrace` per visited level (no re-implementation), so a seeded build and its trace are
reproducible together. Everything recorded is an output of the noisy mechanisms
(noisy counts, noisy split objectives) or public (node rectangles follow from earlier noisy
choices), but it is far more detail than a release needs: it is a teaching view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import numpy as np


class NodeFate(Enum):
    """What happened to a node at its level."""

    SPLIT = "split"  # noisy count above the stop count: split in two
    STOP_COUNT = "stopped: noisy count <= stop count"
    STOP_CELLS = "stopped: fewer cells than stop cells (or no axis with 2 cells)"
    STOP_HEIGHT = "stopped: height 0 reached"


@dataclass(frozen=True)
class SplitTrace:
    """Algorithm 1 for one split node: the evaluated offsets and their noisy objective values."""

    node: int  # index into the level's nodes
    axis: str  # "y" (rows) or "x" (columns)
    candidates: tuple[int, ...]  # offsets evaluated, in order (at most 2T + 1)
    noisy_objective: tuple[float, ...]  # o_s + noise for each candidate
    chosen: int  # the chosen offset


@dataclass(frozen=True)
class LevelTrace:
    """One level of the HTF tree (height i counts down from h to 0)."""

    height: int
    nodes: np.ndarray  # (m, 4) rectangles r0, r1, c0, c1
    noisy_counts: np.ndarray  # (m,) y1 (NaN where the node was not measured: §2.10.1 structural)
    fates: tuple[NodeFate, ...]
    released_values: np.ndarray  # (m,) value released for leaves, NaN for split nodes
    splits: tuple[SplitTrace, ...]
    epsilon_spent: float  # worst-case budget spent once this level is done (height + levels)
    count_scale: float  # Laplace scale of this level's noisy counts (1 / eps_i)
    split_scale: float | None  # scale of each split evaluation's noise (None: no split search)

    def count(self, fate: NodeFate) -> int:
        return sum(1 for f in self.fates if f is fate)


@dataclass
class HTFTrace:
    """Filled by `build_htf(..., trace=HTFTrace())`: the plan and one LevelTrace per level."""

    height: int | None = None
    epsilon_total: float | None = None
    epsilon_height: float = 0.0
    stop_count: float | None = None
    stop_cells: int | None = None
    levels: list[LevelTrace] = field(default_factory=list)

    def start(self, plan: dict, eps_tot: float, stop_count: float, stop_cells: int) -> None:
        self.height = int(plan["h"])
        self.epsilon_total = float(eps_tot)
        self.epsilon_height = float(plan["eps_height"])
        self.stop_count = float(stop_count)
        self.stop_cells = int(stop_cells)
        self.levels = []


def node_fates(leaf: np.ndarray, structural: np.ndarray, height: int) -> tuple[NodeFate, ...]:
    """Per node: split, or why it stopped (structural stops checked first, as in Algorithm 3)."""
    out = []
    for lf, st in zip(leaf.tolist(), structural.tolist(), strict=True):
        if not lf:
            out.append(NodeFate.SPLIT)
        elif height == 0:
            out.append(NodeFate.STOP_HEIGHT)
        elif st:
            out.append(NodeFate.STOP_CELLS)
        else:
            out.append(NodeFate.STOP_COUNT)
    return tuple(out)


def split_traces(
    grow: np.ndarray, axes: np.ndarray, offsets: np.ndarray, evaluated: dict | None
) -> tuple[SplitTrace, ...]:
    """SplitTrace per split node from `level_split_offsets`' record of evaluations."""
    out = []
    for j, node in enumerate(grow.tolist()):
        if evaluated is not None:
            offs, vals = evaluated["offsets"][j], evaluated["values"][j]
            used = offs >= 0
            cand = tuple(int(v) for v in offs[used])
            noisy = tuple(float(v) for v in vals[used])
        else:
            cand, noisy = (), ()
        out.append(SplitTrace(node, "yx"[int(axes[j])], cand, noisy, int(offsets[j])))
    return tuple(out)
