"""The location report's map a stakeholder can read (issue 32 item 4): the page's offline
boundaries and place names, coordinates on the axes, a scale bar, and a legend whose labels never
overlap; the release's accuracy in one sentence beside the map."""

from __future__ import annotations

import re
from html import unescape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.governance.artefacts import to_json
from core.privacy import Cost, DiscreteLaplace
from core.registry import Claim, Policy, Registry
from core.reports import render_report
from core.reports.svg import legend_layout, text_width
from core.spatial.record import GridSpec, LocationArtefact
from core.spatial.synthetic import SYNTHETIC_BBOX

FONT_PX = 11


def outer_map(html: str) -> str:
    """The whole map figure (the outer <svg>, which holds the plot area as a nested <svg>)."""
    start = html.index('<svg class="figure leaves-map"')
    depth, i = 0, start
    for m in re.finditer(r"<svg\b|</svg>", html[start:]):
        depth += 1 if m.group(0) == "<svg" else -1
        if depth == 0:
            i = start + m.end()
            break
    return html[start:i]


def legend_texts(svg: str) -> list[tuple[float, float, str]]:
    """(x, y, label) of every text in the legend group, whatever the layout produced them."""
    legend = svg[svg.index('class="legend"') :]
    out = []
    for m in re.finditer(r"<text([^>]*)>([^<]*)</text>", legend):
        attrs, label = m.group(1), unescape(m.group(2))
        x = float(re.search(r'\bx="([-\d.]+)"', attrs).group(1))
        y = float(re.search(r'\by="([-\d.]+)"', attrs).group(1))
        out.append((x, y, label))
    return out


def _art(
    bbox, rows, cols, leaves, values, leaf_scale=None, unit="one point (one row of the table)"
):
    return LocationArtefact(
        method="ug", label="UG", unit=unit, grid=GridSpec(bbox, rows, cols), leaves=leaves,
        values=values, leaf_scale=leaf_scale,
    )  # fmt: skip


def _uniform(bbox, n, value_of):
    leaves = tuple((r, r + 1, c, c + 1) for r in range(n) for c in range(n))
    return leaves, tuple(float(value_of(r, c)) for r in range(n) for c in range(n))


@pytest.fixture
def reg(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    r = Registry(tmp_path / "reg")
    r.add_dataset("pts", [("t", table)], Policy(5.0, 1e-5), uid="uid")
    return r


def _record(reg, art, mechanisms, dataset="pts", mode="secure"):
    cost = Cost(sum(m.cost.epsilon for m in mechanisms))
    claim = Claim(art.unit, art.unit_column)
    rel = reg.charge("location", dataset, {"method": art.method}, cost, mode, claim)
    return reg.attach(rel.id, to_json(art), mechanisms)


# -- legend layout ----------------------------------------------------------------------------
def _overlap(a, b) -> bool:
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


LABEL = st.text(
    alphabet=st.sampled_from("0123456789,. –≤>()mwMWilabcdefghz²"), min_size=1, max_size=40
)


@settings(max_examples=300, deadline=None)
@given(st.lists(LABEL, min_size=1, max_size=12), st.integers(120, 900))
def test_legend_boxes_never_overlap_and_fit_their_text(labels, width):
    boxes = legend_layout(labels, width, FONT_PX)
    assert len(boxes) == len(labels)
    for i, a in enumerate(boxes):
        # the box holds its swatch and the label's (upper-estimate) width
        assert a.w >= a.swatch + text_width(labels[i], FONT_PX)
        assert a.text_x + text_width(labels[i], FONT_PX) <= a.x + a.w + 1e-9
        # a box passes the width only when it has a row of its own
        if a.x + a.w > width:
            assert a.x == 0 and all(b.y != a.y for j, b in enumerate(boxes) if j != i)
        for b in boxes[i + 1 :]:
            assert not _overlap(a, b), (a, b)


def test_text_width_is_an_upper_estimate_for_wide_labels():
    # the measured labels of issue 32 at 11 px: "1,800 – 3,800" is about 80 px in DejaVu Sans
    assert text_width("1,800 – 3,800", 11) >= 80
    assert text_width("mmmm", 10) >= 4 * 9.7  # 'm' is 0.974 em in DejaVu Sans


def test_drawn_legend_labels_do_not_overlap_with_wide_class_bounds(reg):
    """Dense leaves (thousands of points per km²) give long labels such as "1,800 – 3,800":
    on the drawn map, no label's extent runs into the next one on its row."""
    bbox = (-118.30, 34.00, -118.20, 34.10)
    leaves, values = _uniform(bbox, 16, lambda r, c: round(30 * 1.03 ** (r * 16 + c)))
    art = _art(bbox, 16, 16, leaves, values, leaf_scale=(1.0,) * len(leaves))
    rec = _record(reg, art, [DiscreteLaplace("ug: grid cell counts", sensitivity=1, epsilon=1.0)])
    texts = legend_texts(outer_map(render_report(rec)))
    labels = [t for t in texts if "–" in t[2] or t[2].startswith((">", "≤"))]
    assert any(len(t[2]) >= 11 for t in labels), labels  # long labels were exercised
    by_row: dict[float, list] = {}
    for x, y, label in labels:
        by_row.setdefault(y, []).append((x, x + text_width(label, FONT_PX), label))
    for row in by_row.values():
        row.sort()
        for (_, end, a), (start, _, b) in zip(row, row[1:], strict=False):
            assert end <= start, f"legend label {a!r} runs into {b!r}"


# -- the map's reference layers and axes ------------------------------------------------------
def test_map_of_the_demo_area_has_place_names_boundaries_coordinates_and_a_scale(reg):
    leaves, values = _uniform(SYNTHETIC_BBOX, 8, lambda r, c: (r + c) * 3 - 4)
    art = _art(SYNTHETIC_BBOX, 8, 8, leaves, values, leaf_scale=(1.0,) * 64)
    rec = _record(reg, art, [DiscreteLaplace("ug: grid cell counts", sensitivity=1, epsilon=1.0)])
    svg = outer_map(render_report(rec))
    places = re.findall(r'<text class="place"[^>]*>([^<]+)</text>', svg)
    assert "Los Angeles" in places and "Long Beach" in places and len(places) >= 8
    # the coastline of the US (country) and California (state) as paths
    assert re.search(r'<g class="boundaries"><path class="country" d="M', svg)
    assert '<path class="state"' in svg and '<g class="land"><path' in svg
    # coordinates on the axes: latitudes and longitudes of the demo area
    lat = re.findall(r'class="lat-label"[^>]*>([^<]+)<', svg)
    lon = re.findall(r'class="lon-label"[^>]*>([^<]+)<', svg)
    assert "34.0°N" in lat and "118.2°W" in lon and len(lat) >= 3 and len(lon) >= 3
    assert re.search(r'class="scale-bar".*?>\d+ km<', svg)
    assert svg.count('<rect class="leaf"') == 64
    assert "Natural Earth" in svg and "GeoNames" in svg  # the layers' attribution


def test_map_across_the_antimeridian_and_of_the_world_draws(reg):
    fiji = (176.8, -19.3, -178.2, -15.6)
    leaves, values = _uniform(fiji, 4, lambda r, c: r * c)
    art = _art(fiji, 4, 4, leaves, values, leaf_scale=(1.0,) * 16)
    rec = _record(reg, art, [DiscreteLaplace("ug: grid cell counts", sensitivity=1, epsilon=1.0)])
    svg = outer_map(render_report(rec))
    assert "Lautoka" in svg and "180°" in svg and "179°W" in svg and "179°E" in svg
    world = (-180.0, -90.0, 180.0, 90.0)
    leaves, values = _uniform(world, 4, lambda r, c: r + c)
    art = _art(world, 4, 4, leaves, values, leaf_scale=(1.0,) * 16)
    rec = _record(reg, art, [DiscreteLaplace("ug: grid cell counts", sensitivity=1, epsilon=1.0)])
    svg = outer_map(render_report(rec))
    assert '<path class="country"' in svg and "Shanghai" in svg
    assert "nan" not in svg.lower().replace("kinshasa", "")


def test_accuracy_sentence_beside_the_map_from_the_recorded_mechanism(reg):
    leaves, values = _uniform(SYNTHETIC_BBOX, 4, lambda r, c: 10 * r + c)
    m = DiscreteLaplace("ug: grid cell counts", sensitivity=1, epsilon=0.95)
    art = _art(SYNTHETIC_BBOX, 4, 4, leaves, values, leaf_scale=(m.scale,) * 16)
    html = render_report(_record(reg, art, [m]))
    note = re.search(r'<aside class="map-note">(.*?)</aside>', html, re.S).group(1)
    assert html.index('<svg class="figure leaves-map"') < html.index('<aside class="map-note">')
    text = re.sub(r"<[^>]+>", "", note)
    assert (
        f"Each leaf's count is within ±{m.half_width(0.95)} of the true count 95 % of the time "
        f"(discrete Laplace noise, scale b = {m.scale:.4g})"
    ) in text


@pytest.mark.parametrize(
    "bbox", [(176.8, -19.3, -178.2, -15.6), (-180.0, -90.0, 180.0, 90.0)], ids=["fiji", "world"]
)
def test_no_boundary_draws_a_line_across_the_map_at_the_antimeridian(reg, bbox):
    """Fiji, Russia and Antarctica are cut at 180°: drawn as stored, a cut ring joins -180 to
    180 with a straight line across the whole map; drawn continuous (closed along the pole
    where it goes round one), no edge inside the plot is that long."""
    leaves, values = _uniform(bbox, 4, lambda r, c: r + c)
    art = _art(bbox, 4, 4, leaves, values, leaf_scale=(1.0,) * 16)
    rec = _record(reg, art, [DiscreteLaplace("ug: grid cell counts", sensitivity=1, epsilon=1.0)])
    svg = outer_map(render_report(rec))
    plot = re.search(r'<svg class="plot"[^>]* width="([\d.]+)" height="([\d.]+)"', svg)
    width, height = float(plot.group(1)), float(plot.group(2))
    paths = re.findall(r'<path class="country" d="([^"]+)"', svg)
    assert paths
    longest = 0.0
    for d in paths:
        for ring in d.split("M")[1:]:
            pts = [tuple(map(float, p.split(","))) for p in ring.replace("Z", "").split(" L")]
            steps = [  # edges inside the plot (a ring round the pole closes along its edge)
                abs(b[0] - a[0])
                for a, b in zip(pts, pts[1:], strict=False)
                if 0 < a[1] < height - 1 or 0 < b[1] < height - 1
            ]
            longest = max([longest, *steps])
    assert longest < width / 3, f"a boundary edge {longest:.0f} px long on a {width:.0f} px map"
