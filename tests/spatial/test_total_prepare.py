"""prepare_total (analyst mode): no data-dependent refusal, rows dropped silently, schema errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.spatial.pipeline import prepare
from core.spatial.total_prepare import prepare_total

BBOX = (2.2, 48.7, 2.5, 49.0)


def _points(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"lat": rng.normal(48.85, 0.02, n), "lon": rng.normal(2.35, 0.02, n)})


def test_same_matrix_as_the_owner_path_on_clean_data():
    df = _points(500)
    owner = prepare(df, "lat", "lon", BBOX, 64, 64)
    total = prepare_total(df, "lat", "lon", BBOX, 64)
    assert np.array_equal(owner.F, total.F) and total.grid == owner.grid
    assert total.n_used == owner.n_used


@pytest.mark.parametrize(
    "df",
    [
        _points(3),  # too few points: the owner path refuses with the count
        pd.DataFrame({"lat": [48.8] * 50, "lon": [2.3] * 50}),  # all identical
        pd.DataFrame({"lat": [10.0] * 50, "lon": [10.0] * 50}),  # all outside the bbox
        pd.DataFrame({"lat": ["north"] * 20, "lon": [2.3] * 20}),  # non-numeric values
        pd.DataFrame({"lat": [np.nan] * 20, "lon": [2.3] * 20}),  # missing values
    ],
)
def test_never_refuses_on_the_values(df):
    """Neighbouring tables must not differ in whether the analyst's request fails."""
    out = prepare_total(df, "lat", "lon", BBOX, 32)
    assert out.F.shape == (32, 32) and out.F.sum() == out.n_used


def test_non_numeric_and_outside_rows_are_dropped():
    df = pd.DataFrame({"lat": ["48.8", "x", "80", "48.9"], "lon": [2.3, 2.3, 2.3, "2.4"]})
    out = prepare_total(df, "lat", "lon", BBOX, 8)
    assert (out.n_used, out.n_dropped) == (2, 2)


def test_refuses_only_on_schema_and_public_parameters():
    df = _points(50)
    with pytest.raises(InputError, match="not in the table"):
        prepare_total(df, "latitude", "lon", BBOX, 32)
    with pytest.raises(InputError, match="two different columns"):
        prepare_total(df, "lat", "lat", BBOX, 32)
    with pytest.raises(InputError, match="not valid"):
        prepare_total(df, "lat", "lon", (2.5, 48.7, 2.2, 49.0), 32)


def test_a_longitude_outside_its_domain_is_dropped_even_where_a_wrapped_bbox_would_take_it():
    """Across the antimeridian the grid reads -185 as 175 (inside a 170..-170 box): a value
    outside [-180, 180] is dropped before binning on the analyst's and the owner's path alike,
    so neighbouring tables (with and without that row) give the same F."""
    rng = np.random.default_rng(1)
    lon = np.r_[rng.uniform(170, 180, 40), rng.uniform(-180, -170, 40)]
    df = pd.DataFrame({"lat": rng.uniform(-20, 20, lon.size), "lon": lon})
    bbox = (170.0, -20.0, -170.0, 20.0)
    neighbour = pd.concat([df, pd.DataFrame({"lat": [0.0], "lon": [-185.0]})], ignore_index=True)
    for fn in (lambda d: prepare_total(d, "lat", "lon", bbox, 16),
               lambda d: prepare(d, "lat", "lon", bbox, 16, 16)):  # fmt: skip
        a, b = fn(df), fn(neighbour)
        assert np.array_equal(a.F, b.F) and a.n_used == b.n_used == 80
        assert b.n_dropped == a.n_dropped + 1
