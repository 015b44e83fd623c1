"""Tuning view figure: MRE against epsilon (log-log) per method with error bars, the MRE target
as a horizontal line and each method's smallest epsilon reaching it as a vertical marker.
Evaluation only (the curves use the raw data); no streamlit."""

from __future__ import annotations

import plotly.graph_objects as go

from core.spatial.methods import LABELS
from core.spatial.tuning import TuningResult
from core.viz.axes import log_axis
from core.viz.palette import method_colour


def tuning_figure(result: TuningResult) -> go.Figure:
    """One line per method (mean overall MRE, error bars = std over repetitions)."""
    fig = go.Figure()
    for curve in result.curves:
        color = method_colour(curve.method)  # the same colour as on the MRE chart
        name = LABELS.get(curve.method, curve.method)
        fig.add_trace(
            go.Scatter(
                x=[p.epsilon for p in curve.points],
                y=[p.mre for p in curve.points],
                error_y={"type": "data", "array": [p.mre_std or 0.0 for p in curve.points],
                         "visible": result.reps > 1},
                mode="lines+markers", name=name, line={"color": color}, marker={"color": color},
                hovertemplate="ε = %{x:.3g}<br>MRE = %{y:.3g}<extra>" + name + "</extra>",
            )
        )  # fmt: skip
        eps = curve.smallest.epsilon
        if eps is not None:
            fig.add_vline(x=eps, line={"color": color, "dash": "dot", "width": 1})
    fig.add_hline(
        y=result.target, line={"color": "black", "dash": "dash"},
        annotation_text=f"target MRE {result.target:g}", annotation_position="top left",
    )  # fmt: skip
    epsilons = [p.epsilon for c in result.curves for p in c.points]
    mres = [p.mre + (p.mre_std or 0.0) for c in result.curves for p in c.points]
    mres += [p.mre for c in result.curves for p in c.points] + [result.target]
    fig.update_xaxes(**log_axis(epsilons, "ε (log scale)"))
    fig.update_yaxes(**log_axis(mres, "overall MRE (evaluation only)"))
    fig.update_layout(
        title=f"MRE against ε — mean ± std over {result.reps} repetitions (uses the raw data)",
        legend={"orientation": "h", "y": -0.25}, margin={"t": 60},
    )  # fmt: skip
    return fig
