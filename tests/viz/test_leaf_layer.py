"""The compact leaf layer: the browser rebuilds exactly the exported rectangles and styles,
and the map's weight grows by a bounded number of bytes per leaf."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from core.privacy import Accountant, Cost, Noise
from core.spatial.baselines.ug import build_ug
from core.spatial.export import to_geojson
from core.spatial.grid import Grid
from core.spatial.htf import build_htf
from core.spatial.regions import region_bbox
from core.viz.leaflayer import LeafLayer
from core.viz.spatial import THIN_ABOVE, density_colors, release_map

GRID = Grid(64, 64, region_bbox("los-angeles"))
INFO = Noise.seeded(1).describe()
BYTES_PER_LEAF = 48  # folium's GeoJson took ~400-470 bytes a leaf (10 floats + all properties)
BYTES_PER_LAYER = 4096  # the layer's script, style table and layer-control entry


def _releases():
    F = np.random.default_rng(0).poisson(3.0, size=(64, 64))
    htf = build_htf(F, 1.0, Accountant(Noise.seeded(1), Cost(1.0)))
    ug = build_ug(F, 50.0, Accountant(Noise.seeded(2), Cost(50.0)))  # 4096 leaves
    return {"htf": htf, "ug": ug}


def _html(releases) -> str:
    return release_map(releases, GRID, INFO)[0].get_root().render()


def test_map_weight_is_bounded_per_leaf():
    releases = _releases()
    base = len(_html({}).encode("utf-8"))
    total = len(_html(releases).encode("utf-8"))
    leaves = sum(r.n_leaves for r in releases.values())
    assert leaves > 4000
    assert total - base <= BYTES_PER_LAYER * len(releases) + BYTES_PER_LEAF * leaves


_STUB = """
const out = {};
const L = {geoJson: function (_, opts) {
    return {opts: opts, feats: [], events: [],
            addData: function (fc) { this.feats = fc.features; },
            bindTooltip: function (fn) { this.tip = fn; }, resetStyle: function () {},
            on: function (name) { this.events.push(name); }};
}, control: function () { return {}; }};
"""


def _rebuilt(releases: dict, key: str) -> dict:
    """Run the layer's script in node against a stub `L`; return its features and styles."""
    node = shutil.which("node")
    if node is None:
        msg = "LEAF LAYER JS TEST SKIPPED: no node on PATH (install Debian's 'nodejs')"
        print(f"\n!!! {msg} !!!", file=sys.stderr)
        pytest.skip(msg)
    m, _ = release_map(releases, GRID, INFO)
    layers = [c for c in m._children.values() if isinstance(c, LeafLayer)]
    layer = next(c for c in layers if c.layer_name.startswith(key))
    script = layer._template.module.script(layer, {})
    var = layer.get_name()
    tail = f"""
const lay = {var};
const feats = lay.feats.map(f => ({{geometry: f.geometry, properties: f.properties,
    style: lay.opts.style(f), tip: lay.tip({{feature: f}}), events: lay.events}}));
process.stdout.write(JSON.stringify(feats));
"""
    run = subprocess.run([node, "-e", _STUB + script + tail], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("key", ["htf", "ug"])
def test_browser_rebuilds_the_exported_rectangles_and_styles(key):
    releases = _releases()
    rel = releases[key]
    feats = _rebuilt(releases, key.upper())
    exported = to_geojson(rel, GRID, INFO)["features"]
    assert len(feats) == len(exported) == rel.n_leaves
    colors, fills, _ = density_colors(rel, GRID)
    thin = rel.n_leaves > THIN_ABOVE
    for k, (f, e) in enumerate(zip(feats, exported, strict=True)):
        assert f["geometry"] == e["geometry"]  # the same doubles: no corner moves
        p, q = f["properties"], e["properties"]
        for field in ("noisy_count", "cells", "area_km2", "noise_std"):
            assert p.get(field) == q.get(field), (k, field)
        s = f["style"]
        assert s["fillColor"] == colors[k]
        assert s["fillOpacity"] == fills[k]
        assert (s["weight"], s["opacity"]) == ((0.15, 0.35) if thin else (0.5, 0.7))
        assert f"{q['cells']}" in f["tip"] and "noisy count" in f["tip"]
        assert f["events"] == ["add", "remove"]  # the layer's legend follows the layer
