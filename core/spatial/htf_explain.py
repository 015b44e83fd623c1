"""HTF step by step, in sentences: why each node of a level split or stopped (teaching view).

`explain_level(trace, index)` reads one `LevelTrace` (filled by `build_htf` itself) and says,
with formatted numbers, what Algorithm 3 and Algorithm 1 did at that level: the noise on the
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
    """One level in words: a title, the level's summary, and one sentence per node shown."""

    title: str
    summary: tuple[str, ...]
    nodes: tuple[str, ...]
    more: int  # nodes not described one by one

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
        f"Depth {h - i} of {h} (height {i}): {len(fates):,} node(s); "
        f"{eps(level.epsilon_spent)} of {num(trace.epsilon_total)} spent once this level is done."
    )
    summary = [
        f"Each node's count got discrete Laplace noise of scale {num(level.count_scale)} "
        f"(about ±{num(level.count_scale * math.log(20))} for 95 % of nodes); the noisy count "
        f"decides whether the node splits: above the stop count {num(stop_count)} it does."
    ]
    counts = np.asarray(level.noisy_counts, dtype=float)
    by = {f: [k for k, g in enumerate(fates) if g is f] for f in NodeFate}
    if by[NodeFate.SPLIT]:
        summary.append(
            f"{len(by[NodeFate.SPLIT]):,} node(s) split: noisy counts {_range(counts[by[NodeFate.SPLIT]])}"
            f" > {num(stop_count)}. Each tried at most {_max_tries(level)} cut positions, whose "
            f"homogeneity objective got noise of scale {num(level.split_scale or 0)}, and kept the "
            "lowest noisy value (Algorithm 1)."
        )
    if by[NodeFate.STOP_COUNT]:
        summary.append(
            f"{len(by[NodeFate.STOP_COUNT]):,} node(s) stopped because their noisy count "
            f"({_range(counts[by[NodeFate.STOP_COUNT]])}) is at most the stop count "
            f"{num(stop_count)}: they are leaves, measured again with the rest of their "
            "path's budget (the budget of the levels below them)."
        )
    if by[NodeFate.STOP_CELLS]:
        summary.append(
            f"{len(by[NodeFate.STOP_CELLS]):,} node(s) stopped because they have fewer than "
            f"{stop_cells:,} cells (or no side two cells wide) — a rule on public sizes, whatever "
            "their count."
        )
    if by[NodeFate.STOP_HEIGHT]:
        summary.append(
            f"{len(by[NodeFate.STOP_HEIGHT]):,} node(s) stopped because the tree reached height "
            "0: their noisy count, measured with the last and largest share, is released."
        )
    splits = {s.node: s for s in level.splits}
    sentences = [
        _node_sentence(k, level, splits.get(k), stop_count, stop_cells)
        for k in range(min(len(fates), MAX_NODE_SENTENCES))
    ]
    return LevelExplanation(
        title, tuple(summary), tuple(sentences), max(0, len(fates) - MAX_NODE_SENTENCES)
    )


def _max_tries(level: LevelTrace) -> str:
    tries = [len(s.candidates) for s in level.splits if s.candidates]
    return f"{max(tries):,}" if tries else "2T + 1"


def _node_sentence(k: int, level: LevelTrace, split: SplitTrace | None, stop_count: float,
                   stop_cells: int) -> str:  # fmt: skip
    r0, r1, c0, c1 = (int(v) for v in level.nodes[k])
    y = float(level.noisy_counts[k])
    fate = level.fates[k]
    head = f"Node {k + 1} — {_node(r0, r1, c0, c1)}: "
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
                    f": the lowest noisy objective ({num(best)}) among the "
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
    return head + f"height 0 reached; released value {num(value)} (its noisy count)."
