"""Maps and charts for location histograms (folium + plotly; no streamlit import).

Map rules (ARCHITECTURE.md): one GeoJSON layer per method (`core.viz.leaflayer`: leaves sent as
grid indices with a per-layer style table, rebuilt into `L.geoJson` in the browser),
`prefer_canvas=True`, no basemap tiles unless asked (tiles reveal the viewed area to the tile
server), offline boundaries and place names instead (`core.viz.basemap`), a density legend per layer (quantile classes of its own released densities), and Leaflet from the local copy in `static/leaflet` (BSD-2-Clause,
npm package leaflet 1.9.4) inlined as data: URLs, so the map draws with no internet.
"""

from __future__ import annotations

import base64
from functools import cache
from pathlib import Path

import folium
import numpy as np
import plotly.graph_objects as go

from core.spatial.grid import Grid
from core.spatial.methods import LABELS
from core.spatial.release import Release
from core.viz.axes import log_axis
from core.viz.basemap import add_reference_layers
from core.viz.colorscale import DensityScale, legend_html, release_colors
from core.viz.leaflayer import LeafLayer, LeafStyle, pack_leaves
from core.viz.palette import method_colour

STATIC = Path(__file__).parent / "static" / "leaflet"
LEAFLET_VERSION = "1.9.4"
MAX_MAP_LEAVES = 50_000  # a layer with more leaves is listed, not drawn (the browser would stall)
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


def density_colors(release: Release, grid: Grid) -> tuple[list[str], list[float], DensityScale]:
    """Colour and fill opacity per leaf from its noisy density per km², on the quantile scale
    fitted to this release's own released densities (`core.viz.colorscale`)."""
    return release_colors(release, grid)


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

    Each layer is coloured by noisy density per km² on a quantile scale fitted to its own
    released values (`core.viz.colorscale`: contrast at any grid and density), and shows its
    legend while it is on. `boundaries` draws the offline countries/states/place names (public data,
    chosen by the public bbox only). `sample` is a raw-point overlay for evaluation only.
    `noise_info` and `bbox_from_data` are accepted for the downloads' signature; the map embeds
    no run metadata (only leaf ranges, rounded noisy counts and stated noise std).
    """
    x0, y0, _, y1 = grid.bbox
    east = grid.east  # across the antimeridian: the map's continuous axis (east edge > 180)
    m = folium.Map(
        location=[(y0 + y1) / 2, (x0 + east) / 2],
        tiles="OpenStreetMap" if basemap else None,
        prefer_canvas=True,
        control_scale=True,
        height=height_px,
    )
    offline_leaflet(m)
    m.fit_bounds([[y0, x0], [y1, east]])
    if boundaries:
        add_reference_layers(m, grid.bbox)
    drawable = {k: r for k, r in releases.items() if r.n_leaves <= MAX_MAP_LEAVES}
    skipped = [k for k in releases if k not in drawable]
    for i, (name, rel) in enumerate(drawable.items()):
        colors, fills, scale = density_colors(rel, grid)
        outline = LeafStyle(0.5, 0.7) if rel.n_leaves <= THIN_ABOVE else LeafStyle(0.15, 0.35)
        fields = [(f, ALIASES[f]) for f in ("noisy_count", "cells", "area_km2", "noise_std")]
        label = f"{method_label(name)} ({rel.n_leaves:,} leaves)"
        LeafLayer(
            pack_leaves(rel, grid, colors, fills, outline),
            name=label,
            fields=fields,
            show=i == 0,
            legend=legend_html(scale, method_label(name)),
        ).add_to(m)
    if sample is not None:
        lon, lat = sample
        layer = folium.FeatureGroup(name="raw points (evaluation only)", show=False)
        for a, b in zip(np.asarray(lat).tolist(), np.asarray(lon).tolist(), strict=True):
            folium.CircleMarker(
                [a, b], radius=1, color="#000000", weight=0, fill=True, fill_opacity=0.6
            ).add_to(layer)
        layer.add_to(m)
    folium.LayerControl(collapsed=False).add_to(m)
    return m, skipped


THIN_ABOVE = 2_000  # leaves: above this, outlines get thinner and fainter (10k-40k stay readable)


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
    fig.update_layout(barmode="stack", title="Budget breakdown", yaxis_title="ε", margin={"t": 50})
    return fig
