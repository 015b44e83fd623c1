"""The density colour scale (issue 20, Build 6): fitted to each release's own released
densities, quantile classes with a heavy top, readable at any grid and point density."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.data.demos import get_demo
from core.privacy import Accountant, Cost, Noise
from core.spatial.demos import DEMO_BBOX
from core.spatial.grid import Grid
from core.spatial.methods import get_method
from core.spatial.pipeline import prepare
from core.viz.colorscale import (
    EMPTY_COLOR,
    PALETTE,
    QUANTILES,
    density_scale,
    leaf_areas_km2,
    leaf_density,
    legend_html,
    release_colors,
)


def test_classes_are_the_positive_densities_quantiles():
    d = np.random.default_rng(0).lognormal(0, 2.5, 200_000)
    d[:50_000] = -np.abs(d[:50_000])  # noise over empty space
    scale = density_scale(d)
    assert len(scale.breaks) == len(QUANTILES) and list(scale.breaks) == sorted(scale.breaks)
    assert scale.colors == PALETTE
    cls = scale.classes(d)
    assert np.all(cls[:50_000] == -1) and scale.colors_of(d[:1]) == [EMPTY_COLOR]
    share = np.bincount(cls[cls >= 0], minlength=7) / np.sum(cls >= 0)
    want = np.diff([0.0, *QUANTILES, 1.0])  # 50 / 25 / 15 / 7 / 2 / 0.9 / 0.1 %
    assert np.allclose(share, want, atol=0.02)  # breaks are rounded to two digits
    assert cls[int(np.argmax(d))] == 6  # the densest leaf: the darkest class


def test_the_scale_follows_the_data_not_a_fixed_range():
    """Any density level (a village, a city, a continent): the same relative contrast."""
    d = np.random.default_rng(1).lognormal(0, 1.5, 5_000)
    for factor in (1e-4, 1.0, 1e4):
        assert np.array_equal(density_scale(d * factor).classes(d * factor),
                              density_scale(d).classes(d))  # fmt: skip


def test_few_leaves_still_get_distinct_colours_and_a_readable_legend():
    scale = density_scale([5.0, 5.0, 40.0, 200.0])
    assert len(set(scale.colors)) == len(scale.colors) >= 2
    labels = [label for label, _ in scale.legend()]
    assert labels[0].startswith("≤ 0") and labels[-1].startswith(">")
    assert "e+" not in " ".join(labels)
    html = legend_html(scale, "UG")
    assert "noisy points per km²" in html and "<b>UG</b>" in html
    assert density_scale([-3.0, 0.0]).breaks == ()


def test_leaf_areas_add_up_to_the_sphere_and_wrap_across_180():
    world = Grid(90, 180, (-180.0, -90.0, 180.0, 90.0))
    cells = np.array([[r, r + 1, c, c + 1] for r in range(90) for c in range(180)])
    assert leaf_areas_km2(cells, world.bbox, 90, 180).sum() == pytest.approx(
        4 * math.pi * 6371.0088**2, rel=1e-9
    )
    one = np.array([[0, 8, 0, 8]])
    fiji = leaf_areas_km2(one, (176.8, -19.3, -178.2, -15.6), 8, 8)
    same = leaf_areas_km2(one, (176.8, -19.3, 181.8, -15.6), 8, 8)  # 5 degrees wide either way
    assert fiji == pytest.approx(same) and fiji[0] > 0


@pytest.fixture(scope="module")
def city():
    df = get_demo("htf-city-mixture").load()
    return prepare(df, None, None, DEMO_BBOX["htf-city-mixture"], 1024)


# Recommended builds PrivTree on this example (issue 31, round 7). PrivTree's finest leaves in
# the hot spots are a few cells each, so their noisy densities are the most extreme of the map
# and take the darkest class; the leaves holding the true hottest cells then sit one class
# lower (median class 4-5 of 0-6 over seeds 3-5, where AG and DAWA reach 5). Still far from
# the pale box the test guards against; the colour scale's handling of tiny noisy leaves is a
# separate question.
@pytest.mark.parametrize(("method", "below_darkest"), [
    ("auto", 3), ("privtree", 3), ("ag", 2), ("htf", 2), ("ug", 2),
])  # fmt: skip
def test_the_city_example_at_grid_1024_shows_its_hot_spots(city, method, below_darkest):
    """The issue's 'near-uniform pale box': at 1024 x 1024 the true hot spots must land in the
    darkest classes (within `below_darkest` of the top) and the map must use most of the
    palette."""
    F, grid = city.F, city.grid
    rel = get_method(method)(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)))
    colors, _, scale = release_colors(rel, grid)
    dens = leaf_density(rel.values, rel.leaves, grid.bbox, grid.ny, grid.nx)
    cls = scale.classes(dens)
    assert len(set(cls[cls >= 0].tolist())) >= 6
    # the leaves holding the 20 densest true cells
    hot = np.argsort(F.ravel())[-20:]
    r, c = np.divmod(hot, grid.nx)
    L = rel.leaves
    holding = [int(np.flatnonzero((L[:, 0] <= y) & (y < L[:, 1]) & (L[:, 2] <= x) & (x < L[:, 3]))[0])
               for y, x in zip(r, c, strict=True)]  # fmt: skip
    assert np.median(cls[holding]) >= len(scale.colors) - below_darkest
