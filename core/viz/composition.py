"""A dataset's cumulative ε at its total δ, release by release, under basic and pld accounting
(`core.privacy.composition.cumulative`): one line chart with both curves and the total."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from core.privacy.composition import CumulativePoint
from core.viz.dpsql import BLUE, ORANGE


def composition_figure(
    points: Sequence[CumulativePoint], delta_total: float, epsilon_total: float | None = None
) -> go.Figure:
    """Basic (Σε) and pld (ε at δ = `delta_total`) after each release; the dataset's total ε
    as a dotted line when given."""
    x = [p.count for p in points]
    ids = [p.id for p in points]
    fig = go.Figure()
    for name, ys, colour in (
        ("basic (sum of ε)", [p.basic_epsilon for p in points], ORANGE),
        (f"pld (ε at δ {delta_total:g})", [p.pld_epsilon for p in points], BLUE),
    ):
        fig.add_trace(
            go.Scatter(
                x=x, y=ys, customdata=ids, name=name, mode="lines+markers",
                line={"color": colour},
                hovertemplate="after release %{x} (#%{customdata}): ε %{y:.4g}<extra>"
                + name + "</extra>",
            )
        )  # fmt: skip
    if epsilon_total is not None:
        fig.add_hline(
            y=epsilon_total, line_dash="dot", line_color="gray",
            annotation_text=f"total ε {epsilon_total:g}", annotation_position="top left",
        )  # fmt: skip
    fig.update_layout(
        title=f"Cumulative ε at δ {delta_total:g}, release by release",
        xaxis_title="releases (in order)", yaxis_title="ε", height=340,
        margin={"t": 50, "b": 40, "l": 10, "r": 20}, legend={"orientation": "h", "y": -0.25},
    )  # fmt: skip
    return fig
