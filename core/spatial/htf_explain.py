"""HTF step by step, in sentences: why each node of a level split or stopped (teaching view).

`explain_level(trace, index)` reads one `LevelTrace` (filled by `build_htf` itself) and says,
with formatted numbers and in plain words (the paper's terms are in `paper`, one click away
on the page), what Algorithm 3 and Algorithm 1 did at that level: the noise on the
counts, which nodes split (noisy count above the stop count) and where (the candidate offsets
tried and the chosen one), and which stopped — and why: the noisy count was at or below the
stop count, the node had too few cells (or no axis two cells wide), or the height reached 0.
Every number it quotes is an output of the release's noisy mechanisms or a public parameter;
like the trace itself it is more detail than a release needs (a teaching view for the owner).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.spatial.htf_trace import HTFTrace, LevelTrace, NodeFate, SplitTrace

MAX_NODE_SENTENCES = 12  # per level; the rest are summarised by fate


@dataclass(frozen=True)
class LevelExplanation:
    """One level in words: a title and plain sentences for a student who has not read the
    paper (`summary`), the same level in the paper's terms (`paper`: heights, Algorithm 1, the
    homogeneity objective, noise scales; shown one click away), and one sentence per node."""

    title: str
    summary: tuple[str, ...]
    nodes: tuple[str, ...]
    more: int  # nodes not described one by one
    paper: tuple[str, ...] = ()

    def text(self) -> str:
        lines = [self.title, *self.summary, *self.nodes]
        if self.more:
            lines.append(f"… and {self.more:,} more node(s), summarised above.")
        return "\n".join(lines)


def num(x: float, digits: int = 3) -> str:
    """A readable number: thousands separators, `digits` significant digits, no exponent for
    everyday sizes (12,345; 3.14; 0.0021)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if x == 0:
        return "0"
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    a = abs(x)
    if a >= 10 ** (digits - 1):
        return f"{x:,.0f}"
    decimals = max(0, digits - 1 - math.floor(math.log10(a)))
    return f"{x:,.{decimals}f}"


def eps(x: float) -> str:
    return f"ε {num(x)}"


def _node(r0: int, r1: int, c0: int, c1: int) -> str:
    cells = (r1 - r0) * (c1 - c0)
    return f"rows {r0:,}–{r1:,} × columns {c0:,}–{c1:,}, {cells:,} cells"


def _range(values) -> str:
    v = [float(x) for x in values if not math.isnan(float(x))]
    if not v:
        return "not measured"
    lo, hi = min(v), max(v)
    return num(lo) if lo == hi else f"{num(lo)} to {num(hi)}"


def explain_level(trace: HTFTrace, index: int) -> LevelExplanation:
    """The sentences for `trace.levels[index]` (index 0 = the root's level, depth 0)."""
    level: LevelTrace = trace.levels[index]
    h, i = int(trace.height), int(level.height)
    fates = level.fates
    stop_count, stop_cells = float(trace.stop_count), int(trace.stop_cells)
    title = (
        f"Depth {h - i} of {h}: {len(fates):,} area(s); {eps(level.epsilon_spent)} of "
        f"{num(trace.epsilon_total)} spent once this depth is done."
    )
    spread = num(level.count_scale * math.log(20))  # 95 % of |noise| below scale·ln 20
    summary = [
        f"Each area's number of points gets random noise (within ±{spread} for 95 % of areas), "
        f"and only that noisy count decides what happens next: above {num(stop_count)}, the "
        "area is cut in two."
    ]
    counts = np.asarray(level.noisy_counts, dtype=float)
    by = {f: [k for k, g in enumerate(fates) if g is f] for f in NodeFate}
    if by[NodeFate.SPLIT]:
        summary.append(
            f"{len(by[NodeFate.SPLIT]):,} area(s) are cut in two (noisy counts "
            f"{_range(counts[by[NodeFate.SPLIT]])}), each where its two halves come out most "
            f"even — the best of at most {_max_tries(level)} cut positions, judged with noise too."
        )
    if by[NodeFate.STOP_COUNT]:
        summary.append(
            f"{len(by[NodeFate.STOP_COUNT]):,} area(s) stop: their noisy count "
            f"({_range(counts[by[NodeFate.STOP_COUNT]])}) is at most {num(stop_count)}, too few "
            "points to be worth cutting. They become cells of the final map."
        )
    if by[NodeFate.STOP_CELLS]:
        summary.append(
            f"{len(by[NodeFate.STOP_CELLS]):,} area(s) stop because they are too small to cut "
            f"(fewer than {stop_cells:,} grid cells, or no side two cells wide)."
        )
    if by[NodeFate.STOP_HEIGHT]:
        summary.append(
            f"{len(by[NodeFate.STOP_HEIGHT]):,} area(s) stop because the tree has reached its "
            "last depth: their noisy count is what gets published."
        )
    splits = {s.node: s for s in level.splits}
    sentences = [
        _node_sentence(k, level, splits.get(k), stop_count, stop_cells)
        for k in range(min(len(fates), MAX_NODE_SENTENCES))
    ]
    return LevelExplanation(
        title, tuple(summary), tuple(sentences), max(0, len(fates) - MAX_NODE_SENTENCES),
        paper=_paper(trace, level, by),
    )  # fmt: skip


def _paper(trace: HTFTrace, level: LevelTrace, by: dict) -> tuple[str, ...]:
    """The level in the paper's terms (Shaham et al., SIGSPATIAL 2021, Algorithms 1 and 3)."""
    h, i = int(trace.height), int(level.height)
    lines = [
        f"Depth d is the paper's height i = h − d (h = {h}): this level is height {i}, the root "
        "is height h and the leaves of a full tree are at height 0.",
        f"Each node's count got discrete Laplace noise of scale {num(level.count_scale)} (1/ε_i "
        f"of this level; |noise| ≤ scale·ln 20 ≈ {num(level.count_scale * math.log(20))} with "
        f"probability 95 %); a node splits when its noisy count exceeds the stop count "
        f"{num(float(trace.stop_count))} (Algorithm 3).",
    ]
    if by[NodeFate.SPLIT]:
        lines.append(
            f"Split position (Algorithm 1, private split search): each split node evaluated at "
            f"most {_max_tries(level)} cut positions (2T + 1), whose homogeneity objective got "
            f"noise of scale {num(level.split_scale or 0)}, and kept the lowest noisy value."
        )
    if by[NodeFate.STOP_COUNT]:
        lines.append(
            "A node stopped by its noisy count is a leaf, measured again with the rest of its "
            "path's budget (the budget of the levels below it)."
        )
    lines.append(
        f"{eps(level.epsilon_spent)} is the worst case over the tree's paths once this level is "
        f"done: ε_height ({num(trace.epsilon_height)}, the noisy N that set h) plus the levels "
        f"so far, out of {num(trace.epsilon_total)}."
    )
    return tuple(lines)


def _max_tries(level: LevelTrace) -> str:
    tries = [len(s.candidates) for s in level.splits if s.candidates]
    return f"{max(tries):,}" if tries else "2T + 1"


def _node_sentence(k: int, level: LevelTrace, split: SplitTrace | None, stop_count: float,
                   stop_cells: int) -> str:  # fmt: skip
    r0, r1, c0, c1 = (int(v) for v in level.nodes[k])
    y = float(level.noisy_counts[k])
    fate = level.fates[k]
    head = f"Area {k + 1} — {_node(r0, r1, c0, c1)}: "
    value = float(level.released_values[k])
    if fate is NodeFate.SPLIT:
        where = "rows" if split is not None and split.axis == "y" else "columns"
        text = f"noisy count {num(y)} > {num(stop_count)}, so it splits"
        if split is not None:
            cut = (r0 if split.axis == "y" else c0) + split.chosen
            text += f" between {where} {cut - 1:,} and {cut:,}"
            if split.candidates:
                best = split.noisy_objective[split.candidates.index(split.chosen)]
                text += (
                    f": the most even cut (lowest noisy score, {num(best)}) among the "
                    f"{len(split.candidates)} cut positions tried"
                )
            else:
                text += " (only one cut position: nothing to choose)"
        return head + text + "."
    if fate is NodeFate.STOP_COUNT:
        return head + (
            f"noisy count {num(y)} ≤ {num(stop_count)}, so it stops; released value {num(value)}."
        )
    if fate is NodeFate.STOP_CELLS:
        measured = "" if math.isnan(y) else f"noisy count {num(y)}; "
        return head + (
            f"{measured}only {(r1 - r0) * (c1 - c0):,} cells (< {stop_cells:,}) or no side two "
            f"cells wide, so it stops; released value {num(value)}."
        )
    return head + f"last depth reached; released value {num(value)} (its noisy count)."
