"""Plotly figures for the PP balancing page (no streamlit import).

Figures are built for one step at a time, so a plan with 1,000+ iterations stays responsive.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from core.balancing.phase1 import TraceRow
from core.balancing.plan import PartitionPlan

SA_PRIME_COLOUR = "#4C78A8"
T2_COLOUR = "#F58518"
HEAD_COLOUR = "#72B7B2"
REST_COLOUR = "#BAB0AC"
SLICE_COLOUR = "#E45756"
GREY = "#D3D3D3"
PALETTE = (
    "#4C78A8", "#F58518", "#E45756", "#72B7B2", "#54A24B", "#EECA3B", "#B279A2", "#FF9DA6",
    "#9D755D", "#BAB0AC", "#1F77B4", "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#17BECF",
)  # fmt: skip
MAX_BARS = 60  # bars drawn per step; the rest are summarised in the title
# Title on top, legend right under it, then the plot: no label can sit on another, whatever
# the width (1280×720 is the smallest screen the teaching views are checked at).
TOP_MARGIN = 96


def category_axis(values: Sequence[str], title: str, marks: dict[str, str] | None = None) -> dict:
    """A category x axis whose labels never sit on each other: vertical when the labels are
    long for their number, and at most 30 labels (every k-th; marked values always)."""
    values = [str(v) for v in values]
    marks = marks or {}
    step = max(1, -(-len(values) // 30))
    shown = [v for i, v in enumerate(values) if i % step == 0 or v in marks]
    longest = max((len(v) + len(marks.get(v, "")) + 3 for v in values), default=0)
    vertical = longest * len(values) > 60 or step > 1
    joint = " · " if vertical else "<br>"  # one line when vertical: labels stay thin
    return dict(
        type="category",
        title=title,
        tickmode="array",
        tickvals=shown,
        ticktext=[f"{v}{joint}<b>{marks[v]}</b>" if v in marks else v for v in shown],
        tickangle=-90 if vertical else 0,
    )


def _frame(fig: go.Figure, title: str, height: int, **layout) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, y=0.98, yanchor="top", x=0, xanchor="left"),
        legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom"),
        margin=dict(t=TOP_MARGIN, b=40, l=50, r=20),
        height=height,
        **layout,
    )
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


MAX_VALUE_TRACES = 24  # stacked bars get one trace per value up to this many values


def sa_distribution_figure(plan: PartitionPlan, max_bars: int = 200) -> go.Figure:
    """Counts per value in canonical order; SA' (protected) and T'' (frequent) coloured apart."""
    values = plan.canonical[:max_bars]
    sa = set(plan.sa_prime)
    colours = [SA_PRIME_COLOUR if v in sa else T2_COLOUR for v in values]
    fig = go.Figure(
        go.Bar(
            x=values,
            y=[plan.counts[v] for v in values],
            marker_color=colours,
            hovertemplate="%{x}: %{y} records<extra></extra>",
            showlegend=False,
        )
    )
    for name, colour in (
        ("SA' (needs protection)", SA_PRIME_COLOUR),
        ("T'' (frequent)", T2_COLOUR),
    ):
        fig.add_trace(go.Bar(x=[None], y=[None], marker_color=colour, name=name))
    if plan.n:  # also when nothing needs protection: the line shows every value is above it
        fig.add_hline(
            y=float(plan.rho1 * plan.n),
            line_dash="dot",
            annotation_text=f"ρ1·|T| = {float(plan.rho1 * plan.n):g}",
            annotation_position="top right",
        )
    more = len(plan.canonical) - len(values)
    title = "SA distribution" + (
        f" (first {len(values)} of {len(plan.canonical)} values)" if more else ""
    )
    return _frame(
        fig, title, 360, barmode="overlay", xaxis=category_axis(values, "SA value"),
        yaxis_title="records",
    )  # fmt: skip


def step_figure(
    row: TraceRow,
    order: Sequence[tuple[str, int]],
    beta: int,
    group_colour: str = SLICE_COLOUR,
    beta_name: str = "β",
    t2_counts: dict[str, int] | None = None,
    max_bars: int = MAX_BARS,
) -> go.Figure:
    """One iteration as a bar chart: top-beta highlighted, the h slice shaded, f1/fβ/fβ+1 marked,
    and the balance ceiling |T0|/β drawn as a line."""
    shown = list(order[:max_bars])
    values = [v for v, _ in shown]
    counts = [c for _, c in shown]
    taken = [row.group.get(v, 0) for v in values]
    rest = [c - t for c, t in zip(counts, taken, strict=True)]
    head_colours = [HEAD_COLOUR if i < beta else REST_COLOUR for i in range(len(values))]
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=values,
            y=taken,
            name=f"taken into g{row.j} (h = {row.h})" if row.h else f"g{row.j}: whole remainder",
            marker_color=group_colour,
            marker_pattern_shape="/",
            hovertemplate="%{x}: %{y} taken<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            x=values,
            y=rest,
            name=f"stays in T0 (first {beta_name} = {beta} highlighted)",
            marker_color=head_colours,
            hovertemplate="%{x}: %{y} stay<extra></extra>",
        )
    )
    if t2_counts:
        t2 = list(t2_counts.items())[: max(0, max_bars - len(values))]
        fig.add_trace(
            go.Bar(
                x=[v for v, _ in t2],
                y=[c for _, c in t2],
                name="T'' — distributed after balancing",
                marker_color=GREY,
                opacity=0.6,
            )
        )
    ceiling = row.n0 / beta
    fig.add_hline(
        y=ceiling,
        line_dash="dash",
        line_color="black",
        annotation_text=f"balance ceiling |T0|/{beta_name} = {row.n0}/{beta}",
        annotation_position="top right",
    )
    # f1, fβ and fβ+1 are named under their bars, in the axis labels (never over a bar)
    marks: dict[str, list[str]] = {}
    for label, (value, _count) in (
        ("f1", row.f1), (f"f{beta_name}", row.fb), (f"f{beta_name}+1", row.fb1)
    ):  # fmt: skip
        if value is not None and value in values:
            marks.setdefault(value, []).append(label)  # the count is the bar's height
    axis_title = "SA value (current order)"
    if row.fb1[0] is None and row.h:
        axis_title += f" — f{beta_name}+1 = 0: only {beta_name} values left"
    more = len(order) - len(shown)
    title = f"Iteration {row.j}: T0 has {row.n0} records in {len(order)} values"
    if more:
        title += f" (first {len(shown)} bars shown)"
    return _frame(
        fig, title, 440, barmode="stack", yaxis_title="records in T0",
        xaxis=category_axis(values, axis_title, {v: ", ".join(m) for v, m in marks.items()}),
    )  # fmt: skip


def groups_figure(
    groups: Sequence[dict[str, int]],
    canonical: Sequence[str],
    sa_prime: Sequence[str],
    title: str = "Groups so far",
    names: Sequence[str] | None = None,
) -> go.Figure:
    """Stacked bars, one per group: a segment per value (or SA' vs T'' when there are many)."""
    names = list(names) if names is not None else [f"g{i}" for i in range(1, len(groups) + 1)]
    present = [v for v in canonical if any(v in g for g in groups)]
    sa = set(sa_prime)
    fig = go.Figure()
    if len(present) <= MAX_VALUE_TRACES:
        for k, v in enumerate(present):
            colour = PALETTE[k % len(PALETTE)]
            fig.add_trace(
                go.Bar(
                    x=names,
                    y=[g.get(v, 0) for g in groups],
                    name=v if v in sa else f"{v} (T'')",
                    marker_color=colour,
                    marker_pattern_shape="" if v in sa else "x",
                    hovertemplate=f"{v}: %{{y}}<extra>%{{x}}</extra>",
                )
            )
    else:
        for label, keep, colour in (
            ("SA' values", True, SA_PRIME_COLOUR),
            ("T'' values", False, T2_COLOUR),
        ):
            fig.add_trace(
                go.Bar(
                    x=names,
                    y=[sum(c for v, c in g.items() if (v in sa) == keep) for g in groups],
                    name=label,
                    marker_color=colour,
                )
            )
    return _frame(fig, title, 360, barmode="stack", xaxis=dict(type="category"),
                  yaxis_title="records")  # fmt: skip


def distributions_figure(
    values: Sequence[str],
    original: Sequence[float],
    published: Sequence[float],
    estimate: Sequence[float],
    half_width: Sequence[float],
) -> go.Figure:
    """Original (evaluation only) vs published vs reconstructed counts with 95% intervals."""
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=list(values),
            y=list(original),
            name="original (evaluation only)",
            marker_color=REST_COLOUR,
        )
    )
    fig.add_trace(
        go.Bar(x=list(values), y=list(published), name="published", marker_color=T2_COLOUR)
    )
    fig.add_trace(
        go.Bar(
            x=list(values),
            y=list(estimate),
            name="reconstructed (unbiased estimate ± 95%)",
            marker_color=SA_PRIME_COLOUR,
            error_y=dict(type="data", array=list(half_width), visible=True),
        )
    )
    return _frame(
        fig, "SA distribution: original vs published vs reconstructed", 420, barmode="group",
        xaxis=category_axis(values, "SA value"), yaxis_title="records",
    )  # fmt: skip
