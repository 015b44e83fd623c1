"""The release map: log colour scale and its legend, display names, thin outlines, offline."""

from __future__ import annotations

import math
import re

import numpy as np
from plotly.colors import sample_colorscale

from core.privacy import Accountant, Cost, Noise
from core.spatial.baselines.ug import build_ug
from core.spatial.grid import Grid
from core.spatial.htf import build_htf
from core.spatial.regions import region_bbox
from core.viz.spatial import (
    COLORSCALE,
    THIN_ABOVE,
    _rgb_to_hex,
    density_colors,
    fill_opacity,
    legend_ticks,
    release_map,
)

GRID = Grid(64, 64, region_bbox("los-angeles"))


def _releases():
    F = np.random.default_rng(0).poisson(3.0, size=(64, 64))
    htf = build_htf(F, 1.0, Accountant(Noise.seeded(1), Cost(1.0)))
    ug = build_ug(F, 50.0, Accountant(Noise.seeded(2), Cost(50.0)))  # many leaves
    return {"htf": htf, "ug": ug}


def _script(releases, **kw) -> str:
    m, _ = release_map(releases, GRID, Noise.seeded(1).describe(), **kw)
    return m.get_root().render()


def test_colours_follow_log1p_density():
    rel = _releases()["htf"]
    dens = np.maximum(rel.values / rel.cells_per_leaf(), 0)
    vmax = float(dens.max())
    colors, top = density_colors(rel, vmax)
    assert math.isclose(top, math.log1p(vmax))
    for k in (int(np.argmax(dens)), int(np.argmin(dens))):
        expected = sample_colorscale(COLORSCALE, [math.log1p(dens[k]) / math.log1p(vmax)])[0]
        assert colors[k] == _rgb_to_hex(expected)


def test_legend_ticks_sit_at_their_log_positions():
    vmax = 730.0
    ticks = legend_ticks(vmax)
    assert ticks[0] == (0.0, 0.0)
    values = [v for v, _ in ticks]
    assert values == sorted(values) and values[-1] <= vmax and len(ticks) <= 6
    for v, pos in ticks:
        assert math.isclose(pos, math.log1p(v) / math.log1p(vmax))
    gaps = [b[1] - a[1] for a, b in zip(ticks, ticks[1:], strict=False)]
    assert all(g >= 0.08 for g in gaps)  # labels do not overlap
    assert legend_ticks(0.0) == [(0.0, 0.0)]


def test_map_names_layers_by_display_name_and_has_a_log_legend():
    html = _script(_releases())
    assert "HTF (" in html and "UG (" in html
    assert '"htf (' not in html
    assert "dpx-legend" in html and "log scale" in html


def test_many_leaves_get_thin_outlines():
    releases = _releases()
    assert releases["ug"].n_leaves > THIN_ABOVE >= releases["htf"].n_leaves
    html = _script({"ug": releases["ug"]})
    assert '"weight": 0.15' in html


def test_sparse_leaves_are_fainter():
    assert fill_opacity(0.0, 3.0) == 0.2
    assert fill_opacity(math.expm1(3.0), 3.0) == 0.8
    assert fill_opacity(1.0, 3.0) < fill_opacity(5.0, 3.0)


def test_boundaries_are_drawn_offline_by_default_and_can_be_turned_off():
    releases = {"htf": _releases()["htf"]}
    html = _script(releases)
    assert "dpxLand" in html and "California" in html and "Los Angeles" in html
    assert re.findall(r"(?:src|href)=\"https?://", html) == []  # nothing fetched from the web
    assert "openstreetmap" not in html.lower()
    assert "dpxLand" not in _script(releases, boundaries=False)
    assert "openstreetmap" in _script(releases, basemap=True).lower()  # only when asked
