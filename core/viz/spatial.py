"""Maps and charts for location histograms (folium + plotly; no streamlit import).

Map rules (ARCHITECTURE.md): one GeoJSON layer per method (`core.viz.leaflayer`: leaves sent as
grid indices with a per-layer style table, rebuilt into `L.geoJson` in the browser), `prefer_canvas=True`, no basemap tiles unless asked (tiles reveal the viewed area to
the tile server), offline boundaries and place names instead (`core.viz.basemap`), a log-scale
density legend on the map, and Leaflet from the local copy in `static/leaflet` (BSD-2-Clause,
npm package leaflet 1.9.4) inlined as data: URLs, so the map draws with no internet.
"""

from __future__ import annotations

import base64
import math
from functools import cache
from pathlib import Path

import folium
import numpy as np
import plotly.graph_objects as go
from branca.element import MacroElement
from jinja2 import Template
from plotly.colors import sample_colorscale

from core.spatial.grid import Grid
from core.spatial.methods import LABELS
from core.spatial.release import Release
from core.viz.axes import log_axis
from core.viz.basemap import add_reference_layers
from core.viz.leaflayer import LeafLayer, LeafStyle, pack_leaves
from core.viz.palette import method_colour

STATIC = Path(__file__).parent / "static" / "leaflet"
LEAFLET_VERSION = "1.9.4"
MAX_MAP_LEAVES = 50_000  # a layer with more leaves is listed, not drawn (the browser would stall)
COLORSCALE = "Viridis"
ALIASES = {
    "noisy_count": "noisy count",
    "cells": "cells",
    "area_km2": "area (km²)",
    "noise_std": "noise std (≈)",
}


def method_label(name: str) -> str:
    """The method's display name (core/spatial/methods.py LABELS), used in every legend/table."""
    return LABELS.get(name, name)


def _data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


@cache
def leaflet_assets() -> tuple[str, str]:
    """(leaflet.js, leaflet.css) as data: URLs from the local copy; the CSS's control icons inlined."""
    css = (STATIC / "leaflet.css").read_text(encoding="utf-8")
    for name in ("layers.png", "layers-2x.png"):
        css = css.replace(f"images/{name}", _data_url("image/png", (STATIC / name).read_bytes()))
    js = (STATIC / "leaflet.js").read_bytes()
    return _data_url("text/javascript", js), _data_url("text/css", css.encode("utf-8"))


def offline_leaflet(m: folium.Map) -> folium.Map:
    """Point the map's JS/CSS at the local Leaflet (and nothing else: no jQuery/Bootstrap CDNs)."""
    js, css = leaflet_assets()
    m.default_js = [("leaflet", js)]
    m.default_css = [("leaflet_css", css)]
    return m


def density_colors(release: Release, vmax: float | None = None) -> tuple[list[str], float]:
    """A colour per leaf from its noisy density, clipped at 0 for display only (log scale)."""
    dens = np.maximum(release.values / release.cells_per_leaf(), 0.0)
    logd = np.log1p(dens)
    top = float(np.log1p(vmax)) if vmax is not None else float(logd.max()) if len(logd) else 1.0
    t = np.clip(logd / top, 0, 1) if top > 0 else np.zeros_like(logd)
    return [_rgb_to_hex(c) for c in sample_colorscale(COLORSCALE, t.tolist())], top


def _rgb_to_hex(rgb: str) -> str:
    parts = rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")
    return "#" + "".join(f"{round(float(p)):02x}" for p in parts[:3])


def release_map(
    releases: dict[str, Release],
    grid: Grid,
    noise_info: dict,
    basemap: bool = False,
    sample: tuple[np.ndarray, np.ndarray] | None = None,
    bbox_from_data: bool = False,
    height_px: int = 560,
    boundaries: bool = True,
) -> tuple[folium.Map, list[str]]:
    """A folium map with one toggleable GeoJSON layer per method; returns (map, skipped names).

    Colours share one log density scale across methods so layers are comparable; the legend on
    the map states it. `boundaries` draws the offline countries/states/place names (public data,
    chosen by the public bbox only). `sample` is a raw-point overlay for evaluation only.
    `noise_info` and `bbox_from_data` are accepted for the downloads' signature; the map embeds
    no run metadata (only leaf ranges, rounded noisy counts and stated noise std).
    """
    x0, y0, x1, y1 = grid.bbox
    m = folium.Map(
        location=[(y0 + y1) / 2, (x0 + x1) / 2],
        tiles="OpenStreetMap" if basemap else None,
        prefer_canvas=True,
        control_scale=True,
        height=height_px,
    )
    offline_leaflet(m)
    m.fit_bounds([[y0, x0], [y1, x1]])
    if boundaries:
        add_reference_layers(m, grid.bbox)
    drawable = {k: r for k, r in releases.items() if r.n_leaves <= MAX_MAP_LEAVES}
    skipped = [k for k in releases if k not in drawable]
    vmax = max(
        (float(np.max(np.maximum(r.values / r.cells_per_leaf(), 0))) for r in drawable.values()),
        default=1.0,
    )
    for i, (name, rel) in enumerate(drawable.items()):
        colors, top = density_colors(rel, vmax)
        dens = (rel.values / rel.cells_per_leaf()).tolist()
        fills = [fill_opacity(d, top) for d in dens]  # sparse leaves fainter: boundaries show
        outline = LeafStyle(0.5, 0.7) if rel.n_leaves <= THIN_ABOVE else LeafStyle(0.15, 0.35)
        fields = [(f, ALIASES[f]) for f in ("noisy_count", "cells", "area_km2", "noise_std")]
        LeafLayer(
            pack_leaves(rel, grid, colors, fills, outline),
            name=f"{method_label(name)} ({rel.n_leaves:,} leaves)",
            fields=fields,
            show=i == 0,
        ).add_to(m)
    if sample is not None:
        lon, lat = sample
        layer = folium.FeatureGroup(name="raw points (evaluation only)", show=False)
        for a, b in zip(np.asarray(lat).tolist(), np.asarray(lon).tolist(), strict=True):
            folium.CircleMarker(
                [a, b], radius=1, color="#000000", weight=0, fill=True, fill_opacity=0.6
            ).add_to(layer)
        layer.add_to(m)
    if drawable:
        DensityLegend(vmax).add_to(m)
    folium.LayerControl(collapsed=False).add_to(m)
    return m, skipped


THIN_ABOVE = 2_000  # leaves: above this, outlines get thinner and fainter (10k-40k stay readable)


def fill_opacity(density: float, top: float) -> float:
    """0.2 for an empty leaf up to 0.8 at the top of the log scale (two decimals)."""
    t = math.log1p(max(density, 0.0)) / top if top > 0 else 0.0
    return round(0.2 + 0.6 * min(t, 1.0), 2)


def legend_ticks(vmax: float) -> list[tuple[float, float]]:
    """(value, position in [0, 1]) ticks of the log1p colour scale: 0 and 1-2-5 steps to vmax."""
    top = math.log1p(max(vmax, 0.0))
    if top <= 0:
        return [(0.0, 0.0)]
    ticks = [(0.0, 0.0)]
    decade = 0.1
    while decade <= vmax:
        for step in (1, 2, 5):
            v = step * decade
            if v <= vmax and v >= 0.1:
                ticks.append((v, math.log1p(v) / top))
        decade *= 10
    spaced = [ticks[0]]
    for t in ticks[1:]:
        if t[1] <= 1.0 and t[1] - spaced[-1][1] >= 0.08:  # labels must not overlap
            spaced.append(t)
    ticks = spaced
    # keep at most ~6 labels, evenly spread along the bar
    if len(ticks) > 6:
        keep = np.linspace(0, len(ticks) - 1, 6).round().astype(int)
        ticks = [ticks[i] for i in sorted(set(keep.tolist()))]
    return ticks


class DensityLegend(MacroElement):
    """A colour bar on the map: noisy points per cell on a log scale (negatives shown as 0)."""

    _template = Template(
        """
        {% macro script(this, kwargs) %}
        (function () {
            var legend = L.control({position: "bottomright"});
            legend.onAdd = function () {
                var d = L.DomUtil.create("div", "dpx-legend");
                d.style.cssText = "background:rgba(255,255,255,.9);padding:6px 10px;"
                    + "font:11px sans-serif;border-radius:4px;width:230px";
                d.innerHTML = {{ this.html|tojson }};
                return d;
            };
            legend.addTo({{ this._parent.get_name() }});
        })();
        {% endmacro %}
        """
    )

    def __init__(self, vmax: float):
        super().__init__()
        self._name = "DensityLegend"
        stops = sample_colorscale(COLORSCALE, np.linspace(0, 1, 11).tolist())
        gradient = ", ".join(_rgb_to_hex(c) for c in stops)
        labels = "".join(
            f'<span style="position:absolute;left:{100 * pos:.1f}%;transform:translateX(-50%)">'
            f"{v:g}</span>"
            for v, pos in legend_ticks(vmax)
        )
        self.html = (
            "<b>noisy points per cell</b> (log scale)<br>"
            f'<div style="height:10px;margin-top:3px;background:linear-gradient(to right, '
            f'{gradient})"></div>'
            f'<div style="position:relative;height:14px">{labels}</div>'
            "<span style='color:#555'>negative noisy counts are drawn as 0; sparser leaves "
            "are drawn more transparent</span>"
        )


def mre_chart(rows: list[dict], title: str = "MRE by query size") -> go.Figure:
    """MRE per method and query size, error bars = std over repetitions (log y axis)."""
    fig = go.Figure()
    methods = list(dict.fromkeys(r["method"] for r in rows))
    for m in methods:
        rs = [r for r in rows if r["method"] == m]
        fig.add_trace(
            go.Scatter(
                x=[f"{100 * r['query_size']:g} %" for r in rs],
                y=[r["mre"] for r in rs],
                error_y={
                    "type": "data",
                    "array": [r["mre_std"] or 0.0 for r in rs],
                    "visible": True,
                },
                mode="lines+markers",
                name=method_label(m),
                line={"color": method_colour(m)},
                marker={"color": method_colour(m)},
            )
        )
    fig.update_layout(
        title=title,
        xaxis_title="query size (share of the domain's area)",
        xaxis_type="category",
        yaxis=log_axis(
            [r["mre"] for r in rows] + [r["mre"] + (r["mre_std"] or 0) for r in rows],
            "mean relative error (log scale)",
        ),
        legend_title="method",
        margin={"t": 50, "b": 40},
    )
    return fig


def budget_chart(releases: dict[str, Release]) -> go.Figure:
    """Stacked bars: how each method splits its epsilon (parts add up to the total)."""
    parts = list(dict.fromkeys(k for r in releases.values() for k in r.epsilon if k != "total"))
    fig = go.Figure()
    for part in parts:
        fig.add_trace(
            go.Bar(
                x=[method_label(m) for m in releases],
                y=[r.epsilon.get(part, 0.0) for r in releases.values()],
                name=part,
                hovertemplate="%{x}: " + part + " = %{y:.4g}<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="stack", title="Budget breakdown", yaxis_title="epsilon", margin={"t": 50}
    )
    return fig
