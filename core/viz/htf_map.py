"""HTF step by step on the map: one level of the build over the same offline reference map as the
releases (teaching view; folium, no streamlit import).

The level's nodes are rectangles of the public grid, so they travel as the releases' leaves do
(`core.viz.leaflayer.LeafLayer`: four cell indices per node and a style table, rebuilt in the
browser), coloured by their fate with the grid figure's colours (`core.viz.htf_steps`); the
chosen splits are one multi-segment line. Boundaries and place names are the offline public
layers (`core.viz.basemap`); no tiles, no network request.
"""

from __future__ import annotations

import math

import folium

from core.spatial.export import cell_area_km2
from core.spatial.grid import Grid
from core.spatial.htf_trace import HTFTrace, LevelTrace, NodeFate
from core.viz.basemap import add_reference_layers
from core.viz.htf_steps import FATE_COLORS, FATE_LABELS, STEP_HEIGHT_PX
from core.viz.leaflayer import LeafLayer
from core.viz.spatial import offline_leaflet

FILL_OPACITY = 0.35
# the map is half the page wide: the data sources' credit in small print, not over the map
SMALL_ATTRIBUTION = (
    "<style>.leaflet-control-attribution{font-size:9px;line-height:1.25;max-width:70%}</style>"
)
FIELDS = [("label", "fate"), ("noisy_count", "noisy count"), ("cells", "cells"),
          ("area_km2", "area (km²)")]  # fmt: skip


def level_payload(level: LevelTrace, grid: Grid) -> dict:
    """The level's nodes as a `LeafLayer` payload: one style per fate, the noisy count as the
    value ("not measured" where a structural stop measured nothing)."""
    fates = list(NodeFate)
    x0, y0, _, _ = grid.bbox
    return {
        "x0": float(x0),
        "y0": float(y0),
        "cw": float(grid.cell_width),
        "ch": float(grid.cell_height),
        "cellKm2": cell_area_km2(grid),
        "leaves": [int(v) for v in level.nodes[:, :4].ravel()],
        "values": [
            "not measured" if math.isnan(float(y)) else round(float(y), 1)
            for y in level.noisy_counts
        ],
        "style": [fates.index(f) for f in level.fates],
        "styles": [
            {
                "fillColor": FATE_COLORS[f],
                "color": FATE_COLORS[f],
                "weight": 1.2,
                "opacity": 0.9,
                "fillOpacity": FILL_OPACITY,
            }
            for f in fates
        ],  # fmt: skip
        "std": None,
        "styleNames": [FATE_LABELS[f] for f in fates],  # the tooltip's "fate" row
    }


def split_segments(level: LevelTrace, grid: Grid) -> list[list[list[float]]]:
    """Each chosen split of the level as a [[lat, lon], [lat, lon]] segment on the map."""
    x0, y0, _, _ = grid.bbox
    cw, ch = float(grid.cell_width), float(grid.cell_height)
    out = []
    for s in level.splits:
        r0, r1, c0, c1 = (int(v) for v in level.nodes[s.node])
        if s.axis == "y":  # between rows: a horizontal line
            lat = y0 + (r0 + s.chosen) * ch
            out.append([[lat, x0 + c0 * cw], [lat, x0 + c1 * cw]])
        else:
            lon = x0 + (c0 + s.chosen) * cw
            out.append([[y0 + r0 * ch, lon], [y0 + r1 * ch, lon]])
    return out


def legend_html(level: LevelTrace) -> str:
    """The fates present at this level, with their colours (the grid figure's legend)."""
    rows = "".join(
        f"<div><span style='display:inline-block;width:10px;height:10px;margin-right:5px;"
        f"background:{FATE_COLORS[f]};opacity:.7'></span>{FATE_LABELS[f]} ({level.count(f)})</div>"
        for f in NodeFate
        if level.count(f)
    )
    if level.splits:
        rows += "<div><b>—</b> chosen split</div>"
    return rows


def level_map(
    trace: HTFTrace, index: int, grid: Grid, height_px: int = STEP_HEIGHT_PX,
    boundaries: bool = True,
) -> folium.Map:  # fmt: skip
    """A folium map of `trace.levels[index]` over the offline boundaries and place names."""
    level = trace.levels[index]
    x0, y0, _, y1 = grid.bbox
    east = grid.east
    m = folium.Map(
        location=[(y0 + y1) / 2, (x0 + east) / 2], tiles=None, prefer_canvas=True,
        control_scale=True, height=height_px,
    )  # fmt: skip
    offline_leaflet(m)
    m.get_root().header.add_child(folium.Element(SMALL_ATTRIBUTION))
    m.fit_bounds([[y0, x0], [y1, east]])
    if boundaries:
        add_reference_layers(m, grid.bbox)
    layer = LeafLayer(
        level_payload(level, grid), name=f"depth {index}: {len(level.nodes):,} area(s)", fields=FIELDS, show=True,
        legend=legend_html(level),
    )  # fmt: skip
    layer.add_to(m)
    segments = split_segments(level, grid)
    if segments:
        folium.PolyLine(segments, color="#000000", weight=2.5, opacity=0.9).add_to(m)
    return m
