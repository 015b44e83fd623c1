"""Plotly charts on the pages: one configuration, so the toolbar never covers a chart's title.

Plotly draws its toolbar (the "modebar") over the top right of the chart, where a long title
runs. `show_chart` shows it only while the pointer is over the chart and stands it upright at
the right edge (`layout.modebar.orientation = "v"`), beside the plot, not over the title.
"""

from __future__ import annotations

import plotly.graph_objects as go

CHART_CONFIG = {"displayModeBar": "hover", "displaylogo": False}


def show_chart(target, fig: go.Figure, key: str, **kwargs) -> None:
    """`target.plotly_chart(fig)` (target: `st` or a column) with the toolbar beside the plot."""
    fig.update_layout(modebar={"orientation": "v"})
    if fig.layout.margin.r is None or fig.layout.margin.r < 30:
        fig.update_layout(margin={"r": 30})  # room for the upright toolbar
    target.plotly_chart(fig, key=key, config=CHART_CONFIG, **kwargs)
