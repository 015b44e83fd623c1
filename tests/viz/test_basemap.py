"""Offline reference layers: TopoJSON decoding, the shipped boundary files, clipping, place names."""

from __future__ import annotations

import json

import pytest

from core.spatial.regions import REGIONS, region_bbox
from core.viz.basemap import (
    BOUNDARIES,
    PLACE_TIERS,
    clip_ring,
    reference_layers,
    topojson_features,
)


def _names(collection: dict) -> set[str]:
    return {f["properties"]["name"] for f in collection["features"]}


def test_topojson_decoding_follows_the_spec():
    # quantized, delta-encoded arcs; position = quantized * scale + translate; ~i = arc i reversed
    topology = {
        "type": "Topology",
        "transform": {"scale": [0.5, 2.0], "translate": [10.0, 20.0]},
        "arcs": [[[0, 0], [2, 0], [0, 1]], [[0, 0], [2, 1]]],
        "objects": {
            "shapes": {
                "type": "GeometryCollection",
                "geometries": [
                    {"type": "Polygon", "arcs": [[0, ~1]], "properties": {"name": "tri"}},
                    {"type": None},
                ],
            }
        },
    }
    (feature,) = topojson_features(topology, "shapes")
    assert feature["properties"]["name"] == "tri"
    # arc 0: (0,0) (2,0) (2,1) -> (10,20) (11,20) (11,22); arc 1 reversed: (2,1) -> (0,0)
    assert feature["geometry"]["coordinates"] == [[[10, 20], [11, 20], [11, 22], [10, 20]]]


def test_shipped_layers_decode_to_closed_rings_in_degrees():
    for file, obj in (("countries-110m.json", "countries"), ("states-10m.json", "states")):
        topology = json.loads((BOUNDARIES / file).read_text(encoding="utf-8"))
        features = topojson_features(topology, obj)
        assert len(features) == len(
            [g for g in topology["objects"][obj]["geometries"] if g.get("arcs")]
        )
        for f in features:
            geom = f["geometry"]
            polys = [geom["coordinates"]] if geom["type"] == "Polygon" else geom["coordinates"]
            for ring in (r for p in polys for r in p):
                assert ring[0] == ring[-1]  # TopoJSON rings close on their first point
                assert all(-180.001 <= x <= 180.001 and -90.001 <= y <= 90.001 for x, y in ring)
    assert (BOUNDARIES / "NOTICE").read_text().count("public domain") >= 2


def test_los_angeles_gets_california_the_us_and_its_places():
    bbox = region_bbox("los-angeles")
    layers = reference_layers(bbox)
    assert "United States of America" in _names(layers.countries)
    assert "California" in _names(layers.states)
    assert "Texas" not in _names(layers.states)  # far outside the view
    names = [p[2] for p in layers.places]
    assert names[0] == "Los Angeles" and layers.places[0][3] == 0  # biggest first, always shown
    x0, y0, x1, y1 = bbox
    px, py = (x1 - x0) * 0.1, (y1 - y0) * 0.1
    for lat, lon, _name, tier in layers.places:
        assert x0 - px <= lon <= x1 + px and y0 - py <= lat <= y1 + py
        assert 0 <= tier < len(PLACE_TIERS)
    tiers = [p[3] for p in layers.places]
    assert tiers == sorted(tiers) and tiers.count(0) == min(PLACE_TIERS[0], len(tiers))


@pytest.mark.parametrize("region", [r.name for r in REGIONS])
def test_every_preset_has_context_and_a_bounded_payload(region):
    layers = reference_layers(region_bbox(region))
    assert layers.countries["features"] and layers.places
    size = len(json.dumps(layers.countries)) + len(json.dumps(layers.states))
    assert size < 1_500_000  # clipped to the view: the map stays quick to send and draw


def test_world_view_uses_small_scale_countries_without_states():
    layers = reference_layers(region_bbox("world"))
    assert len(layers.countries["features"]) == 177  # Natural Earth 1:110m admin-0
    assert layers.states["features"] == []


def test_clip_ring_keeps_the_part_inside_the_view():
    square = [[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]
    clipped = clip_ring(square, (2, -1, 10, 10))
    assert clipped[0] == clipped[-1]
    assert {tuple(p) for p in clipped} == {(2, 0), (4, 0), (4, 4), (2, 4)}
    assert clip_ring(square, (5, 5, 6, 6)) == []
