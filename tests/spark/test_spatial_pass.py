"""The Spark data pass bins points exactly like the numpy path (`core.spatial.grid`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.spatial.grid import Grid, bin_points
from core.spatial.pipeline import prepare
from core.spatial.spark_pass import bin_points_spark, prepare_spark

BBOX = (-10.0, 40.0, 10.0, 60.0)


def points() -> pd.DataFrame:
    """Random points plus every edge case: on each cell edge, on the max edges and corners,
    just outside, far outside, and missing coordinates."""
    rng = np.random.default_rng(3)
    lon = list(rng.uniform(-12, 12, 3000))
    lat = list(rng.uniform(38, 62, 3000))
    edges_x = list(np.linspace(-10, 10, 9))  # the 8-column grid's edges, both bbox edges
    edges_y = list(np.linspace(40, 60, 6))
    for ex in edges_x:
        for ey in edges_y:
            lon.append(ex)
            lat.append(ey)
    lon += [np.nextafter(10.0, 11), np.nextafter(-10.0, -11), 0.0, np.nan, 1.0, 170.0]
    lat += [50.0, 50.0, np.nextafter(60.0, 61), 45.0, np.nan, -80.0]
    return pd.DataFrame({"lon": lon, "lat": lat, "other": range(len(lon))})


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    path = tmp_path_factory.mktemp("pts") / "points.parquet"
    points().to_parquet(path)
    return path


def test_frequency_matrix_equals_numpy_including_edges(spark, parquet):
    df = points()
    grid = Grid(5, 8, BBOX)
    expected = bin_points(df["lon"].to_numpy(), df["lat"].to_numpy(), grid)
    got = bin_points_spark(spark.read.parquet(str(parquet)), "lon", "lat", grid)
    assert got.F.dtype == np.int64 and got.F.shape == (5, 8)
    assert np.array_equal(got.F, expected.F)
    assert got.n_used == expected.n_used
    assert got.n_dropped == len(df) - expected.n_used  # NaN rows count as dropped too
    assert expected.n_dropped > 0 and got.F[-1, -1] > 0  # outside points and the max corner


def test_prepare_matches_pipeline(spark, parquet):
    df = points()
    ours = prepare_spark(spark, parquet, "lat", "lon", BBOX, rows=16, cols=12)
    ref = prepare(df, "lat", "lon", BBOX, rows=16, cols=12)
    assert np.array_equal(ours.F, ref.F)
    assert (ours.n_used, ours.n_dropped) == (ref.n_used, ref.n_dropped)


def test_bad_input_is_a_clear_error(spark, parquet, tmp_path):
    with pytest.raises(InputError, match="no bounding box"):
        prepare_spark(spark, parquet, "lat", "lon", None, rows=8)
    with pytest.raises(InputError, match="column 'latitude' not found"):
        prepare_spark(spark, parquet, "latitude", "lon", BBOX, rows=8)
    with pytest.raises(InputError, match="file not found"):
        prepare_spark(spark, tmp_path / "missing.csv", "lat", "lon", BBOX, rows=8)
