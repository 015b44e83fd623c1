"""Plotly figures for the DP SQL page (no streamlit import)."""

from __future__ import annotations

import plotly.graph_objects as go

BLUE, ORANGE, GREY, RED = "#4C78A8", "#F58518", "#BAB0AC", "#E45756"


def survival_figure(curve: list[dict], threshold: int, tau: float) -> go.Figure:
    """P(partition released | n units): the engine's discrete curve and the continuous view."""
    n = [p["units"] for p in curve]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=n, y=[p["keep_probability"] for p in curve], mode="lines+markers", name="engine "
            "(discrete Laplace)", line={"color": BLUE},
            hovertemplate="%{x} units: %{y:.3f}<extra></extra>",
        )
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=n, y=[p["keep_probability_continuous"] for p in curve], mode="lines",
            name="continuous approximation", line={"color": GREY, "dash": "dot"},
        )
    )  # fmt: skip
    fig.add_vline(x=threshold, line={"color": RED, "dash": "dash"})
    fig.update_layout(
        title=f"Chance a group is released by its number of units (T = {threshold}, τ = {tau:.2f})",
        xaxis_title="distinct units in the group",
        yaxis_title="P(released)",
        yaxis={"range": [0, 1.02]},
        height=360,
        margin={"t": 60, "b": 40, "l": 50, "r": 20},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def budget_figure(split: list[dict]) -> go.Figure:
    """Horizontal bars: epsilon per mechanism (the threshold share in orange)."""
    labels = [f"{r['aggregate']} · {r['component']}" for r in split]
    colours = [ORANGE if r["kind"] == "THRESHOLD" else BLUE for r in split]
    fig = go.Figure(
        go.Bar(
            x=[r["epsilon"] for r in split], y=labels, orientation="h", marker_color=colours,
            hovertemplate="%{y}: ε = %{x:.4g}<extra></extra>",
        )
    )  # fmt: skip
    fig.update_layout(
        title="How ε is split", xaxis_title="ε", height=80 + 40 * len(split),
        margin={"t": 50, "b": 40, "l": 10, "r": 20}, yaxis={"autorange": "reversed"},
    )  # fmt: skip
    return fig


def result_figure(keys: list, values: list, low: list, high: list, name: str) -> go.Figure:
    """Released values with their 95% intervals (noise only)."""
    labels = [str(k) for k in keys]
    fig = go.Figure(
        go.Bar(
            x=labels, y=values, marker_color=BLUE, name=name,
            error_y={
                "type": "data", "symmetric": False,
                "array": [h - v for v, h in zip(values, high, strict=True)],
                "arrayminus": [v - lo for v, lo in zip(values, low, strict=True)],
            },
        )
    )  # fmt: skip
    fig.update_layout(
        title=f"{name} with 95% intervals (noise only)", height=360,
        margin={"t": 50, "b": 40, "l": 50, "r": 20},
    )  # fmt: skip
    return fig


def ledger_figure(spent: float, total: float | None) -> go.Figure:
    """Session ε spent against the total (a single bar)."""
    fig = go.Figure(go.Bar(x=[spent], y=["ε spent"], orientation="h", marker_color=BLUE))
    if total is not None:
        fig.add_vline(x=total, line={"color": RED, "dash": "dash"})
    fig.update_layout(
        height=140, margin={"t": 30, "b": 30, "l": 10, "r": 20},
        xaxis={"range": [0, max(total or 0, spent) * 1.1 or 1]},
        title=f"Session budget: ε {spent:.3g} of {total if total is not None else '∞'}",
    )  # fmt: skip
    return fig
