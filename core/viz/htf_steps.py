"""HTF step by step: one level of the build as a plotly figure (teaching view; no streamlit).

Drawn on the grid's cell coordinates (column = x, row = y, row 0 at the bottom as on the map):
every node of the level as a rectangle coloured by its fate, the chosen split as a thick line,
the evaluated candidate positions as thin dashed lines (hover: the noisy objective value), and
a hover label per node with its noisy count and why it stopped.
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from core.spatial.htf_trace import HTFTrace, LevelTrace, NodeFate

FATE_COLORS = {
    NodeFate.SPLIT: "#1f77b4",
    NodeFate.STOP_COUNT: "#ff7f0e",
    NodeFate.STOP_CELLS: "#9467bd",
    NodeFate.STOP_HEIGHT: "#2ca02c",
}
FATE_LABELS = {
    NodeFate.SPLIT: "split (noisy count > stop count)",
    NodeFate.STOP_COUNT: "stopped: noisy count ≤ stop count",
    NodeFate.STOP_CELLS: "stopped: cells < stop cells",
    NodeFate.STOP_HEIGHT: "stopped: last depth reached",
}
STEP_HEIGHT_PX = 430  # the level's chart and map side by side: one 1280 x 720 screen with
# the level's sentences above them
MAX_CANDIDATE_NODES = 200  # candidate lines are drawn for at most this many split nodes


def _fmt(v: float) -> str:
    return "not measured" if math.isnan(v) else f"{v:,.1f}"


def level_summary(trace: HTFTrace, level: LevelTrace) -> dict:
    """Counts per fate and the budget line for one level (for a caption or a table)."""
    return {
        "depth": int(trace.height) - level.height,
        "nodes": len(level.nodes),
        **{FATE_LABELS[f]: level.count(f) for f in NodeFate},
        "count noise scale": level.count_scale,
        "split noise scale": level.split_scale,
        "ε spent so far": level.epsilon_spent,
        "ε total": trace.epsilon_total,
    }


def _outline(r0, r1, c0, c1):
    return [c0, c1, c1, c0, c0, None], [r0, r0, r1, r1, r0, None]


def level_figure(
    trace: HTFTrace, index: int, ny: int, nx: int, height_px: int = STEP_HEIGHT_PX
) -> go.Figure:
    """Figure of `trace.levels[index]` on an ny x nx grid (teaching view; see module doc)."""
    level = trace.levels[index]
    fig = go.Figure()
    for fate in NodeFate:
        xs, ys, hx, hy, text = [], [], [], [], []
        for j, f in enumerate(level.fates):
            if f is not fate:
                continue
            r0, r1, c0, c1 = (int(v) for v in level.nodes[j])
            x, y = _outline(r0, r1, c0, c1)
            xs += x
            ys += y
            hx.append((c0 + c1) / 2)
            hy.append((r0 + r1) / 2)
            released = level.released_values[j]
            text.append(
                f"area {j + 1}: rows {r0}–{r1}, cols {c0}–{c1} ({(r1 - r0) * (c1 - c0)} cells)<br>"
                f"noisy count {_fmt(level.noisy_counts[j])} (stop count {trace.stop_count:g})<br>"
                f"{FATE_LABELS[f]}"
                + ("" if math.isnan(released) else f"<br>released value {released:,.1f}")
            )
        if not xs:
            continue
        color = FATE_COLORS[fate]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", fill="toself", line={"color": color},
                                 opacity=0.35, name=f"{FATE_LABELS[fate]} ({len(text)})",
                                 hoverinfo="skip", legendgroup=fate.name))  # fmt: skip
        fig.add_trace(go.Scatter(x=hx, y=hy, mode="markers", marker={"color": color, "size": 4},
                                 text=text, hoverinfo="text", showlegend=False,
                                 legendgroup=fate.name))  # fmt: skip
    _add_splits(fig, level)
    fig.update_layout(
        title={"text": f"Depth {index} of {trace.height}: {len(level.nodes)} area(s); ε spent "
               f"so far {level.epsilon_spent:.4g} of {trace.epsilon_total:g}",
               "x": 0, "xanchor": "left", "font": {"size": 13}},
        xaxis={"range": [0, nx], "title": "grid column", "constrain": "domain"},
        yaxis={"range": [0, ny], "title": "grid row", "scaleanchor": "x"},
        legend={"orientation": "h", "y": -0.2, "yanchor": "top", "font": {"size": 10}},
        margin={"l": 40, "r": 30, "t": 40, "b": 20},
        height=height_px,
        modebar={"orientation": "v"},  # beside the plot, never over the title
    )  # fmt: skip
    return fig


def _add_splits(fig: go.Figure, level: LevelTrace) -> None:
    """Chosen split lines (solid) and evaluated candidates (dashed, hover = noisy objective)."""
    cx, cy, chx, chy, ctext = [], [], [], [], []
    kx, ky = [], []
    for s in level.splits[:MAX_CANDIDATE_NODES]:
        r0, r1, c0, c1 = (int(v) for v in level.nodes[s.node])
        for off, val in zip(s.candidates, s.noisy_objective, strict=True):
            line = _line(r0, r1, c0, c1, s.axis, off)
            cx += line[0]
            cy += line[1]
            chx.append((line[0][0] + line[0][1]) / 2)
            chy.append((line[1][0] + line[1][1]) / 2)
            mark = " (chosen)" if off == s.chosen else ""
            ctext.append(f"area {s.node + 1}, offset {off}{mark}: noisy objective {val:,.1f}")
    for s in level.splits:
        r0, r1, c0, c1 = (int(v) for v in level.nodes[s.node])
        line = _line(r0, r1, c0, c1, s.axis, s.chosen)
        kx += line[0]
        ky += line[1]
    if cx:
        fig.add_trace(go.Scatter(x=cx, y=cy, mode="lines", line={"color": "grey", "dash": "dot",
                                 "width": 1}, name="candidate splits", hoverinfo="skip"))  # fmt: skip
        fig.add_trace(go.Scatter(x=chx, y=chy, mode="markers", marker={"color": "grey", "size": 5},
                                 text=ctext, hoverinfo="text", showlegend=False))  # fmt: skip
    if kx:
        fig.add_trace(go.Scatter(x=kx, y=ky, mode="lines", line={"color": "black", "width": 2.5},
                                 name="chosen split", hoverinfo="skip"))  # fmt: skip


def _line(r0, r1, c0, c1, axis: str, off: int):
    """A split at `off` along `axis` ("y": between rows, "x": between columns) as a segment."""
    if axis == "y":
        return [c0, c1, None], [r0 + off, r0 + off, None]
    return [c0 + off, c0 + off, None], [r0, r1, None]
