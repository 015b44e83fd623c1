"""A compact Leaflet layer for one release's leaves (folium element; no streamlit import).

folium's GeoJson embeds every leaf as a GeoJSON Polygon of ten full-precision floats with all
export properties, plus a `switch` case per feature for its style: ~470 bytes a leaf. Here a
leaf is sent as what it is on the public grid — four integer cell indices, its noisy count and
the index of its style in a per-layer table of distinct (colour, opacity) styles — and the
browser rebuilds the same rectangles (corner = bbox origin + index × cell size, the same
double arithmetic as `core.spatial.export.leaf_bounds`, so no corner moves) into an
`L.geoJson` layer. Tooltip fields (noisy count, cells, area, noise std) are the export's; an
optional `styleNames` (one name per style) adds a `label` field (the HTF stepper's fates).

Only released values are embedded (leaf ranges, rounded noisy counts, the stated noise std);
this module releases nothing itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from folium.map import Layer
from jinja2 import Template

from core.spatial.export import cell_area_km2, leaf_noise_std
from core.spatial.grid import Grid
from core.spatial.release import Release

HIGHLIGHT = {"weight": 2, "color": "#000000"}


@dataclass(frozen=True)
class LeafStyle:
    """Outline of every leaf of a layer (fill colour and opacity vary per leaf)."""

    weight: float
    opacity: float
    color: str = "#333333"


def pack_leaves(
    release: Release, grid: Grid, colors: list[str], fills: list[float], outline: LeafStyle
) -> dict:
    """The layer's payload: grid origin/cell size, flat leaf indices, values, style table."""
    L = np.asarray(release.leaves, dtype=np.int64)
    pairs = list(zip(colors, fills, strict=True))
    table = sorted(set(pairs))
    index = {p: i for i, p in enumerate(table)}
    std = leaf_noise_std(release)
    if std is not None and len(std) and np.all(std == std[0]):
        std_out: float | list[float] | None = round(float(std[0]), 3)
    else:
        std_out = None if std is None else np.round(std, 3).tolist()
    x0, y0, _, _ = grid.bbox  # JS computes corners on the unwrapped axis: x0 + c * cw
    return {
        "x0": float(x0),
        "y0": float(y0),
        "cw": float(grid.cell_width),
        "ch": float(grid.cell_height),
        "cellKm2": cell_area_km2(grid),
        "leaves": L[:, :4].ravel().tolist(),  # row0, row1, col0, col1 per leaf
        "values": np.round(np.asarray(release.values, dtype=float), 3).tolist(),
        "style": [index[p] for p in pairs],
        "styles": [
            {
                "fillColor": c,
                "color": outline.color,
                "weight": outline.weight,
                "opacity": outline.opacity,
                "fillOpacity": f,
            }
            for c, f in table
        ],
        "std": std_out,
    }


class LeafLayer(Layer):
    """One release as a toggleable overlay of rectangles with a hover highlight and tooltip."""

    _template = Template(
        """
        {% macro script(this, kwargs) %}
        var {{ this.get_name() }} = (function () {
            var d = {{ this.payload|tojson }};
            var hi = {{ this.highlight|tojson }};
            var layer = L.geoJson(null, {
                smoothFactor: 0,
                style: function (f) { return d.styles[f.properties.s]; },
                onEachFeature: function (f, l) {
                    l.on({
                        mouseover: function (e) { e.target.setStyle(hi); },
                        mouseout: function (e) { layer.resetStyle(e.target); }
                    });
                }
            });
            var feats = [], L4 = d.leaves, n = d.values.length;
            for (var i = 0; i < n; i++) {
                var r0 = L4[4 * i], r1 = L4[4 * i + 1], c0 = L4[4 * i + 2], c1 = L4[4 * i + 3];
                var a = d.x0 + c0 * d.cw, b = d.y0 + r0 * d.ch;
                var c = d.x0 + c1 * d.cw, e = d.y0 + r1 * d.ch;
                var cells = (r1 - r0) * (c1 - c0);
                var p = {s: d.style[i], noisy_count: d.values[i], cells: cells,
                         area_km2: Math.round(cells * d.cellKm2 * 1e4) / 1e4};
                if (d.std !== null) { p.noise_std = Array.isArray(d.std) ? d.std[i] : d.std; }
                if (d.styleNames) { p.label = d.styleNames[d.style[i]]; }
                feats.push({type: "Feature", properties: p, geometry: {type: "Polygon",
                    coordinates: [[[a, b], [c, b], [c, e], [a, e], [a, b]]]}});
            }
            layer.addData({type: "FeatureCollection", features: feats});
            var fields = {{ this.fields|tojson }};
            layer.bindTooltip(function (l) {
                var rows = "";
                for (var k = 0; k < fields.length; k++) {
                    var v = l.feature.properties[fields[k][0]];
                    if (v === undefined) { continue; }
                    rows += "<tr><th style='text-align:left;padding-right:6px'>" + fields[k][1]
                        + "</th><td>" + v.toLocaleString() + "</td></tr>";
                }
                return "<table>" + rows + "</table>";
            }, {sticky: true});
            var legendHtml = {{ this.legend|tojson }};
            if (legendHtml) {  // the layer's own colour scale, shown while the layer is on
                var legend = L.control({position: "bottomright"});
                legend.onAdd = function () {
                    var box = L.DomUtil.create("div", "dpx-legend");
                    box.style.cssText = "background:rgba(255,255,255,.92);padding:6px 9px;"
                        + "font:11px/1.35 sans-serif;border-radius:4px;max-width:260px";
                    box.innerHTML = legendHtml;
                    return box;
                };
                layer.on("add", function (e) { legend.addTo(e.target._map); });
                layer.on("remove", function (e) { e.target._map.removeControl(legend); });
            }
            return layer;
        })();
        {% endmacro %}
        """
    )

    def __init__(
        self,
        payload: dict,
        name: str,
        fields: list[tuple[str, str]],
        show: bool,
        legend: str = "",
    ):
        super().__init__(name=name, overlay=True, control=True, show=show)
        self._name = "LeafLayer"
        self.payload = payload
        self.fields = [list(f) for f in fields]
        self.highlight = HIGHLIGHT
        self.legend = legend  # HTML of the layer's colour legend (`core.viz.colorscale`)
