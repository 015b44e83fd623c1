"""The report's map of a location release as one inline SVG (no script, no external reference):
the page's offline reference layers (`core.viz.basemap`: land, country and US-state boundaries,
ranked place names; public data chosen by the public bbox only), the released leaves coloured
on the page's density scale (`core.viz.colorscale`), a graticule with latitude/longitude labels
on the axes, a scale bar in km, and a legend whose boxes are laid out from their text widths
(`core.reports.svg.legend_layout`) so that no two labels overlap.

Projection: Web Mercator, as the page's Leaflet map, so the report and the page show one shape.
The plot area is a nested <svg>, which clips what lies outside it (no clip-path reference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from core.reports.svg import legend_layout, text_width
from core.viz import basemap
from core.viz.basemap import ATTRIBUTION
from core.viz.colorscale import density_scale, leaf_density

FONT_PX = 11
MAX_W, MAX_H, MIN_H = 620, 560, 140
SEA, LAND = "#dce8f0", "#f4f1ea"  # the page's map colours (basemap.OfflineReference)
MAX_LAT = 85.0511  # Web Mercator's edge
MAX_PLACES = 24
PAD = 0.03  # share of the bbox added around it before clipping the boundaries


def _merc(lat: float) -> float:
    lat = max(-MAX_LAT, min(MAX_LAT, lat))
    return math.log(math.tan(math.pi / 4 + math.radians(lat) / 2))


@dataclass(frozen=True)
class Frame:
    """lon/lat -> pixels of the plot area. `west` .. `west + span` is the continuous longitude
    axis (a bbox across the antimeridian runs past 180)."""

    west: float
    span: float
    south: float
    north: float
    w: float
    h: float

    def x(self, lon: float) -> float:
        return (lon - self.west) / self.span * self.w if self.span else 0.0

    def y(self, lat: float) -> float:
        top, bottom = _merc(self.north), _merc(self.south)
        return (top - _merc(lat)) / ((top - bottom) or 1.0) * self.h

    def km_per_px(self, lat: float) -> float:
        return self.span / self.w * 111.32 * math.cos(math.radians(lat))


def frame_of(grid) -> Frame:
    """The plot area for a grid's bbox: Mercator aspect, fitted inside MAX_W x MAX_H."""
    west, south, _, north = grid.bbox
    span = grid.width or 1e-9
    ratio = (_merc(north) - _merc(south)) / math.radians(span)
    w, h = MAX_W, MAX_W * ratio
    if h > MAX_H:
        w, h = MAX_H / ratio, MAX_H
    return Frame(west, span, south, north, round(max(w, 200.0), 1), round(max(h, MIN_H), 1))


# -- graticule --------------------------------------------------------------------------------
def _nice_steps():
    for e in range(-4, 3):
        for s in (1, 2, 2.5, 5):
            yield s * 10**e
    yield from (150.0, LARGEST_STEP)


LARGEST_STEP = 300.0  # degrees: at most one or two lines, whatever the map


def _decimals(step: float) -> int:
    d = 0
    while d < 6 and abs(step * 10**d - round(step * 10**d)) > 1e-9:
        d += 1
    return d


def lon_label(lon: float, step: float) -> str:
    lon = (lon + 180.0) % 360.0 - 180.0
    d = _decimals(step)
    hemi = "" if abs(lon) < 1e-12 or abs(abs(lon) - 180) < 1e-12 else ("E" if lon > 0 else "W")
    return f"{abs(lon):.{d}f}°{hemi}"


def lat_label(lat: float, step: float) -> str:
    d = _decimals(step)
    hemi = "" if abs(lat) < 1e-12 else ("N" if lat > 0 else "S")
    return f"{abs(lat):.{d}f}°{hemi}"


def _ticks(lo: float, hi: float, step: float) -> list[float]:
    k0 = math.ceil(lo / step - 1e-9)
    k1 = math.floor(hi / step + 1e-9)
    return [round(k * step, 10) for k in range(k0, k1 + 1)]


def graticule(f: Frame) -> tuple[list[float], float, list[float], float]:
    """(longitudes, their step, latitudes, their step): the smallest 'nice' steps whose labels
    fit between their lines (about 3 to 7 lines each way)."""
    lon_step = next(
        (
            s
            for s in _nice_steps()
            if f.span / s <= 7
            and s / f.span * f.w >= text_width(lon_label(f.west + s, s), FONT_PX) + 10
        ),
        LARGEST_STEP,
    )
    lat_span = f.north - f.south
    lat_step = next(
        (
            s
            for s in _nice_steps()
            if lat_span / s <= 7
            and min(abs(f.y(a) - f.y(a + s)) for a in _ticks(f.south, f.north, s) or [f.south])
            >= FONT_PX * 1.6
        ),
        LARGEST_STEP,
    )
    return (
        _ticks(f.west, f.west + f.span, lon_step),
        lon_step,
        _ticks(f.south, f.north, lat_step),
        lat_step,
    )


# -- layers -----------------------------------------------------------------------------------
def _continuous(ring, centre: float) -> list[list[float]]:
    """The ring with no step over 180° in longitude (a ring cut at the antimeridian is drawn
    whole, never as a line across the map), moved by whole turns next to `centre`."""
    out = [[float(ring[0][0]), float(ring[0][1])]]
    for lon, lat in ring[1:]:
        out.append([lon + 360.0 * round((out[-1][0] - lon) / 360.0), lat])
    if abs(out[-1][0] - out[0][0]) > 180:  # it goes round a pole (Antarctica): close it there
        pole = -90.0 if sum(p[1] for p in out) < 0 else 90.0
        out += [[out[-1][0], pole], [out[0][0], pole], list(out[0])]
    xs = [p[0] for p in out]
    k = round((centre - (min(xs) + max(xs)) / 2) / 360.0)
    return [[x + 360.0 * k, y] for x, y in out]


def _moved(box, dx: float):
    return (box[0] + dx, box[1], box[2] + dx, box[3])


def map_layers(grid) -> tuple[list, list, list]:
    """(country polygons, US-state polygons, places) for the grid's bbox: the page's offline
    layers (`core.viz.basemap`: the same files, the same choice of scale, the same ranked
    places), each ring made continuous in longitude on the map's axis (west .. west + width)
    before it is clipped to the view (padded by `PAD` of its size)."""
    west, south, _, north = grid.bbox
    span, height = grid.width, north - south
    pad_x, pad_y = span * PAD, height * PAD  # a static map: a small margin is enough
    view = (west - pad_x, max(south - pad_y, -90.0),
            west + span + pad_x, min(north + pad_y, 90.0))  # fmt: skip
    centre = west + span / 2
    wide = span > basemap.WORLD_SCALE_SPAN
    countries = basemap._layer("countries-110m.json" if wide else "countries-50m.json", "countries")
    near_us = any(basemap._overlaps(_moved(view, d), basemap.US_EXTENT) for d in (-360, 0, 360))
    states = (
        basemap._layer("states-10m.json", "states")
        if span <= basemap.STATES_MAX_SPAN and near_us
        else ()
    )

    def polygons(layer) -> list:
        out = []
        for feature, extent in layer:
            if not any(basemap._overlaps(extent, _moved(view, d)) for d in (-360, 0, 360)):
                continue
            geom = feature["geometry"]
            polys = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
            for poly in polys:
                rings = [
                    basemap.clip_ring(_continuous(r, centre), view) for r in poly if len(r) > 1
                ]
                rings = [r for r in rings if len(r) >= 4]
                if rings:
                    out.append(rings)
        return out

    if grid.bbox[0] > grid.bbox[2]:  # across the antimeridian: the east part moves by +360
        west_part = basemap.places_in(basemap._padded((west, south, 180.0, north), 0.1))
        east_part = basemap.places_in(basemap._padded((-180.0, south, grid.bbox[2], north), 0.1))
        places = [*west_part, *((la, lo + 360.0, n, t) for la, lo, n, t in east_part)]
    else:
        places = basemap.places_in(basemap._padded(tuple(grid.bbox), 0.1))
    return polygons(countries), polygons(states), places


def _path(f: Frame, poly, step: float = 0.7) -> str:
    """SVG path data of a polygon's rings in pixels; a point closer than `step` px (in x + y)
    to the last one kept is dropped (invisible at this size, and it keeps the file small)."""
    out = []
    for ring in poly:
        kept: list[tuple[float, float]] = []
        for lon, lat in ring:
            x, y = f.x(lon), f.y(lat)
            if not kept or abs(x - kept[-1][0]) + abs(y - kept[-1][1]) >= step:
                kept.append((x, y))
        if len(kept) >= 3:
            out.append("M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in kept) + " Z")
    return " ".join(out)


def reference(f: Frame, grid, reserved=()):
    """(land, borders, places) SVG for the grid's bbox, from the page's offline layers; place
    names stay clear of the `reserved` boxes (the scale bar)."""
    try:
        countries, states, places = map_layers(grid)
    except Exception:  # noqa: BLE001 - a report without the reference layers is still a report
        return "", "", ""
    country_d = [d for d in (_path(f, poly) for poly in countries) if d]
    state_d = [d for d in (_path(f, poly) for poly in states) if d]
    land = "".join(
        f'<path d="{d}" fill="{LAND}" stroke="none" fill-rule="evenodd"/>' for d in country_d
    )
    borders = "".join(
        f'<path class="country" d="{d}" fill="none" stroke="#444" stroke-width="0.9" '
        'opacity="0.85"/>'
        for d in country_d
    ) + "".join(
        f'<path class="state" d="{d}" fill="none" stroke="#666" stroke-width="0.7" '
        'stroke-dasharray="3 3" opacity="0.85"/>'
        for d in state_d
    )
    return (
        f'<g class="land">{land}</g>',
        f'<g class="boundaries">{borders}</g>',
        f'<g class="places">{places_svg(f, places, reserved)}</g>',
    )


def places_svg(f: Frame, places, reserved=()) -> str:
    """Place names by rank (the page's tier 0 first), skipping any whose label box would
    overlap one already placed, a `reserved` box, or leave the plot area."""
    taken: list[tuple[float, float, float, float]] = list(reserved)
    placed = 0
    out = []
    for lat, lon, name, _tier in places:
        if placed >= MAX_PLACES:
            break
        x, y = f.x(lon), f.y(lat)
        box = (x - 3, y - FONT_PX, x + 6 + text_width(name, FONT_PX), y + 4)
        if box[0] < 0 or box[1] < 0 or box[2] > f.w or box[3] > f.h:
            continue
        if any(_overlap(box, t) for t in taken):
            continue
        taken.append(box)
        placed += 1
        out.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.2" fill="#222"/>'
            f'<text class="place" x="{x + 5:.1f}" y="{y + 3.5:.1f}" font-size="{FONT_PX}" '
            f'fill="#222" stroke="#fff" stroke-width="3" paint-order="stroke">'
            f"{escape(name)}</text>"
        )
    return "".join(out)


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def scale_bar(f: Frame) -> tuple[str, tuple[float, float, float, float] | None]:
    """A km scale bar for the map's middle latitude (as Leaflet's scale control), and the box
    it covers."""
    mid = (f.south + f.north) / 2
    kmpp = f.km_per_px(mid)
    if not (kmpp > 0 and math.isfinite(kmpp)):
        return "", None
    target = 110 * kmpp
    nice = max(
        (s * 10**e for e in range(-3, 5) for s in (1, 2, 5) if s * 10**e <= target),
        default=target,
    )
    px = nice / kmpp
    label = f"{nice:g} km" + (f" (at {lat_label(round(mid), 1)})" if f.north - f.south > 10 else "")
    x0, y0 = 8, f.h - 10
    box_w = max(px, text_width(label, FONT_PX)) + 8
    svg = (
        f'<g class="scale-bar"><rect x="{x0 - 4}" y="{y0 - 16}" '
        f'width="{box_w:.1f}" height="22" fill="#fff" '
        f'opacity="0.8"/><path d="M{x0},{y0 - 4} L{x0},{y0} L{x0 + px:.1f},{y0} '
        f'L{x0 + px:.1f},{y0 - 4}" fill="none" stroke="#222" stroke-width="1.5"/>'
        f'<text x="{x0}" y="{y0 - 6}" font-size="{FONT_PX}">{escape(label)}</text></g>'
    )
    return svg, (x0 - 4, y0 - 16, x0 - 4 + box_w, y0 + 6)


# -- the figure -------------------------------------------------------------------------------
def leaves_map(art, title: str, half_widths=None) -> str:
    """The released leaves over the offline reference layers, with axes and a legend; a leaf's
    tooltip gives its 95 % noise half-width where `half_widths` (one per leaf) states it."""
    if not art.leaves:
        return f'<p class="muted">{escape(title)}: no leaves.</p>'
    g = art.grid
    f = frame_of(g)
    dens = leaf_density(art.values, art.leaves, g.bbox, g.rows, g.cols)
    scale = density_scale(dens)
    colours, opacity = scale.colors_of(dens), scale.opacities_of(dens)
    lons, lon_step, lats, lat_step = graticule(f)
    # latitude labels beside the plot, none at its corners (where the longitude row or the
    # title would run into them)
    lat_labels = [(a, lat_label(a, lat_step)) for a in lats if FONT_PX < f.y(a) < f.h - FONT_PX]
    lat_texts = [t for _, t in lat_labels]
    left = max([text_width(t, FONT_PX) for t in lat_texts] or [0]) + 10
    top, bottom = 24, 22
    lon_texts = [lon_label(lo, lon_step) for lo in lons]
    right = max([text_width(t, FONT_PX) / 2 for t in lon_texts] or [0]) + 4
    total_w = max(left + f.w + right, 560)
    thin = len(art.leaves) > 2000
    leaf_svg = []
    hws = half_widths if half_widths is not None else [None] * len(art.leaves)
    for (r0, r1, c0, c1), v, d, fill, op, hw in zip(
        art.leaves, art.values, dens, colours, opacity, hws, strict=True
    ):
        pm = "" if hw is None else f" ± {hw:.4g} (95 %)"
        lat0 = g.bbox[1] + r0 * (g.bbox[3] - g.bbox[1]) / g.rows
        lat1 = g.bbox[1] + r1 * (g.bbox[3] - g.bbox[1]) / g.rows
        x0, x1 = c0 / g.cols * f.w, c1 / g.cols * f.w
        y1, y0 = f.y(lat0), f.y(lat1)
        leaf_svg.append(
            f'<rect class="leaf" x="{x0:.2f}" y="{y0:.2f}" width="{x1 - x0:.2f}" '
            f'height="{y1 - y0:.2f}" fill="{fill}" fill-opacity="{op:g}" stroke="#555" '
            f'stroke-width="{0.15 if thin else 0.4}"><title>noisy count {v:.4g}{pm}; {d:.4g} per km²'
            "</title></rect>"
        )
    bar, bar_box = scale_bar(f)
    land, borders, places = reference(f, g, [bar_box] if bar_box else [])
    grid_lines = "".join(
        f'<line x1="{f.x(lo):.1f}" y1="0" x2="{f.x(lo):.1f}" y2="{f.h}"/>' for lo in lons
    ) + "".join(f'<line x1="0" y1="{f.y(a):.1f}" x2="{f.w}" y2="{f.y(a):.1f}"/>' for a in lats)
    axes = "".join(
        f'<text class="lon-label" x="{left + f.x(lo):.1f}" y="{top + f.h + 15:.1f}" '
        f'text-anchor="middle" font-size="{FONT_PX}">{escape(t)}</text>'
        for lo, t in zip(lons, lon_texts, strict=True)
    ) + "".join(
        f'<text class="lat-label" x="{left - 5:.1f}" y="{top + f.y(a) + 4:.1f}" '
        f'text-anchor="end" font-size="{FONT_PX}">{escape(t)}</text>'
        for a, t in lat_labels
    )
    legend_y = top + f.h + bottom + 8
    legend, legend_h = legend_svg(scale, total_w, legend_y)
    height = legend_y + legend_h + 18
    return (
        f'<svg class="figure leaves-map" role="img" aria-label="{escape(title)}" '
        f'width="{total_w:.0f}" height="{height:.0f}" viewBox="0 0 {total_w:.0f} {height:.0f}">'
        f'<text x="0" y="16" class="fig-title">{escape(title)}</text>'
        f'<svg class="plot" x="{left:.1f}" y="{top}" width="{f.w}" height="{f.h}" '
        f'viewBox="0 0 {f.w} {f.h}" overflow="hidden">'
        f'<rect width="{f.w}" height="{f.h}" fill="{SEA}"/>{land}'
        f'<g class="leaves">{"".join(leaf_svg)}</g>{borders}'
        f'<g class="graticule" stroke="#333" stroke-width="0.5" stroke-dasharray="2 3" '
        f'opacity="0.45">{grid_lines}</g>{places}{bar}</svg>'
        f'<rect x="{left:.1f}" y="{top}" width="{f.w}" height="{f.h}" fill="none" '
        f'stroke="#333" stroke-width="0.8"/>'
        f'<g class="axes">{axes}</g>{legend}'
        f'<text x="0" y="{height - 4:.0f}" font-size="9" fill="#666">'
        f"{escape(ATTRIBUTION)}</text></svg>"
    )


def legend_svg(scale, width: float, y: float) -> tuple[str, float]:
    """The density classes as swatches with their full labels, laid out by `legend_layout`
    (rows wrap; no two boxes overlap); returns (svg, height)."""
    rows = scale.legend()
    boxes = legend_layout([label for label, _ in rows], width, FONT_PX)
    head = f"{scale.unit} (quantile classes of this release)"
    parts = [
        f'<g class="legend" transform="translate(0,{y:.1f})">'
        f'<text class="legend-title" x="0" y="{FONT_PX}" font-size="{FONT_PX}" '
        f'font-weight="bold">{escape(head)}</text>'
    ]
    dy = FONT_PX * 1.8
    for box, (label, colour) in zip(boxes, rows, strict=True):
        parts.append(
            f'<g class="legend-item"><rect class="swatch" x="{box.x:.1f}" '
            f'y="{dy + box.y + 1:.1f}" width="{box.swatch:.0f}" height="{FONT_PX - 1}" '
            f'fill="{colour}" stroke="#555" stroke-width="0.4"/>'
            f'<text class="legend-label" x="{box.text_x:.1f}" y="{dy + box.y + FONT_PX - 1:.1f}" '
            f'font-size="{FONT_PX}" data-w="{box.w:.1f}">{escape(label)}</text></g>'
        )
    parts.append("</g>")
    height = dy + max(b.y + b.h for b in boxes)
    return "".join(parts), height
