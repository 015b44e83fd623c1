"""Plotly figures for the DP SQL page (no streamlit import)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from core.governance.artefacts import MISSING

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


# MISSING: the one spelling of a missing value in pages, files and reports (issue 18.5)


def _is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _shown(value) -> str:
    return MISSING if _is_missing(value) else str(value)


def key_columns(columns: list[str], ci95: dict) -> list[str]:
    """The GROUP BY key columns of a released result: the outputs that are not aggregates."""
    return [c for c in columns if c not in ci95]


def group_labels(rows: list[list], columns: list[str], keys: list[str]) -> list[str]:
    """One label per released row combining every key ("HR · 2021"); missing keys read MISSING."""
    index = [columns.index(k) for k in keys]
    if not index:
        return ["all rows"] * len(rows)
    return [" · ".join(_shown(row[i]) for i in index) for row in rows]


def result_table(rows: list[list], columns: list[str], ci95: dict) -> pd.DataFrame:
    """The released rows with a ±95% column per numeric aggregate, missing values as MISSING.

    Columns holding a missing value are shown as text so that every missing cell reads the same
    (pandas/Streamlit would otherwise print None in one column and nan or <NA> in another)."""
    table = pd.DataFrame(rows, columns=columns)
    for name, widths in ci95.items():
        if any(w is not None for w in widths):
            table[f"{name} ±95%"] = widths
    for i, col in enumerate(columns):
        values = [row[i] for row in rows]  # as released (pandas turns 2021 into 2021.0)
        if any(_is_missing(v) for v in values):
            table[col] = [_shown(v) for v in values]
    return table


def result_figure(labels: list[str], values: list, low: list, high: list, name: str) -> go.Figure:
    """Released values of one aggregate, one bar per released group, with 95% intervals (noise
    only). `labels` combine every GROUP BY key (see `group_labels`); a missing value has no bar
    and no error bar, and its group keeps its place on the axis."""

    def gap(a, b):
        return None if _is_missing(a) or _is_missing(b) else a - b

    fig = go.Figure(
        go.Bar(
            x=labels, y=[None if _is_missing(v) else v for v in values], marker_color=BLUE,
            name=name,
            error_y={
                "type": "data", "symmetric": False,
                "array": [gap(h, v) for v, h in zip(values, high, strict=True)],
                "arrayminus": [gap(v, lo) for v, lo in zip(values, low, strict=True)],
            },
        )
    )  # fmt: skip
    fig.update_layout(
        title=f"{name} with 95% intervals (noise only)", height=360,
        margin={"t": 50, "b": 40, "l": 50, "r": 20},
        xaxis={"type": "category", "title": "group"},
    )  # fmt: skip
    return fig


def ledger_figure(spent: float, total: float | None, dataset: str) -> go.Figure:
    """A dataset's ε spent against its total (a single bar)."""
    fig = go.Figure(go.Bar(x=[spent], y=["ε spent"], orientation="h", marker_color=BLUE))
    if total is not None:
        fig.add_vline(x=total, line={"color": RED, "dash": "dash"})
    fig.update_layout(
        height=140, margin={"t": 30, "b": 30, "l": 10, "r": 20},
        xaxis={"range": [0, max(total or 0, spent) * 1.1 or 1]},
        title=f"Budget of dataset {dataset}: ε {spent:.3g} of "
        + (f"{total:g}" if total is not None else "∞"),
    )  # fmt: skip
    return fig
