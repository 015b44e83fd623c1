"""The release map: the release's own density scale and its legend, display names, thin
outlines, offline."""

from __future__ import annotations

import re

import numpy as np

from core.privacy import Accountant, Cost, Noise
from core.spatial.baselines.ug import build_ug
from core.spatial.grid import Grid
from core.spatial.htf import build_htf
from core.spatial.regions import region_bbox
from core.viz.colorscale import density_scale, leaf_density
from core.viz.spatial import THIN_ABOVE, density_colors, release_map

GRID = Grid(64, 64, region_bbox("los-angeles"))


def _releases():
    F = np.random.default_rng(0).poisson(3.0, size=(64, 64))
    htf = build_htf(F, 1.0, Accountant(Noise.seeded(1), Cost(1.0)))
    ug = build_ug(F, 50.0, Accountant(Noise.seeded(2), Cost(50.0)))  # many leaves
    return {"htf": htf, "ug": ug}


def _script(releases, **kw) -> str:
    m, _ = release_map(releases, GRID, Noise.seeded(1).describe(), **kw)
    return m.get_root().render()


def test_colours_follow_the_releases_own_density_scale():
    rel = _releases()["htf"]
    colors, fills, scale = density_colors(rel, GRID)
    dens = leaf_density(rel.values, rel.leaves, GRID.bbox, 64, 64)
    assert scale == density_scale(dens)  # fitted to this release's released values only
    assert colors == scale.colors_of(dens) and fills == scale.opacities_of(dens)
    top, low = int(np.argmax(dens)), int(np.argmin(dens))
    assert scale.classes(dens[[top]])[0] > scale.classes(dens[[low]])[0]


def test_map_names_layers_by_display_name_and_gives_each_its_legend():
    html = _script(_releases())
    assert "HTF (" in html and "UG (" in html
    assert '"htf (' not in html
    assert "dpx-legend" in html and "noisy points per km" in html
    assert html.count("legend.addTo(e.target._map)") == 2  # one legend per layer, while shown


def test_many_leaves_get_thin_outlines():
    releases = _releases()
    assert releases["ug"].n_leaves > THIN_ABOVE >= releases["htf"].n_leaves
    html = _script({"ug": releases["ug"]})
    assert '"weight": 0.15' in html


def test_boundaries_are_drawn_offline_by_default_and_can_be_turned_off():
    releases = {"htf": _releases()["htf"]}
    html = _script(releases)
    assert "dpxLand" in html and "California" in html and "Los Angeles" in html
    assert re.findall(r"(?:src|href)=\"https?://", html) == []  # nothing fetched from the web
    assert "openstreetmap" not in html.lower()
    assert "dpxLand" not in _script(releases, boundaries=False)
    assert "openstreetmap" in _script(releases, basemap=True).lower()  # only when asked
