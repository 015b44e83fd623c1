"""Binning in DuckDB (core.spatial.scan) against the in-memory path (read_points_table + prepare):
the same F, owner counts and unit on the same file and seed, and the same one-line errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.privacy import Noise
from core.spatial.io import read_points_table
from core.spatial.pipeline import prepare
from core.spatial.scan import scan_prepare
from core.spatial.unit import unit_from

BBOX = (-118.6, 33.7, -117.9, 34.4)


def _table(n: int = 4000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    lon = rng.uniform(-118.8, -117.7, n)  # some points fall outside BBOX
    lat = rng.uniform(33.6, 34.5, n)
    lon[:5] = BBOX[0]  # on the edges: the first cell / the last cell
    lon[5:10] = BBOX[2]
    lat[10:15] = BBOX[3]
    lat[20:30] = np.nan  # missing coordinates are dropped (and counted)
    uid = rng.integers(0, 150, n).astype(str)
    uid[40:50] = None  # points without a person id are never kept
    return pd.DataFrame({"latitude": lat, "longitude": lon, "person": uid, "other": 1})


def _write(df: pd.DataFrame, tmp_path, kind: str):
    path = tmp_path / f"points.{kind}"
    if kind == "csv":
        df.to_csv(path, index=False)
    else:
        df.to_parquet(path, index=False)
    return path


def _old(path, unit, seed, bbox=BBOX, rows=64, cols=None, lat=None, lon=None):
    df = read_points_table(path, lat, lon, unit.column)
    noise = Noise.seeded(seed)
    return prepare(df, lat, lon, bbox, rows, cols, allow_data_bbox=True, unit=unit, noise=noise)


def _new(path, unit, seed, bbox=BBOX, rows=64, cols=None, lat=None, lon=None):
    noise = Noise.seeded(seed)
    return scan_prepare(
        path, lat, lon, bbox, rows, cols, allow_data_bbox=True, unit=unit, noise=noise
    )


def _same(a, b) -> None:
    assert np.array_equal(a.F, b.F)
    assert a.F.dtype == b.F.dtype == np.int64
    assert (a.n_used, a.n_dropped, a.n_capped) == (b.n_used, b.n_dropped, b.n_capped)
    assert (a.grid, a.lat_col, a.lon_col, a.unit, a.bbox_from_data) == (
        b.grid, b.lat_col, b.lon_col, b.unit, b.bbox_from_data,
    )  # fmt: skip


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("bbox", [BBOX, None])
def test_point_unit_same_as_in_memory(tmp_path, kind, bbox):
    path = _write(_table(), tmp_path, kind)
    unit = unit_from(None, None)
    old, new = _old(path, unit, 1, bbox, 50, 37), _new(path, unit, 1, bbox, 50, 37)
    _same(old, new)
    assert new.n_dropped >= 10 and new.n_used > 1000  # NaN rows (and outside points) dropped


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("seed", [1, 2])
def test_person_unit_same_subset_as_in_memory(tmp_path, kind, seed):
    path = _write(_table(), tmp_path, kind)
    unit = unit_from("person", 3)
    old, new = _old(path, unit, seed), _new(path, unit, seed)
    _same(old, new)
    assert new.n_capped > 100  # the bound bites: the same random subset was kept


def test_integer_person_ids_in_parquet(tmp_path):
    df = _table()
    df["person"] = np.arange(len(df)) % 97
    path = _write(df, tmp_path, "parquet")
    unit = unit_from("person", 2)
    _same(_old(path, unit, 5), _new(path, unit, 5))


def test_bbox_across_the_antimeridian(tmp_path):
    rng = np.random.default_rng(0)
    lon = np.r_[rng.uniform(170, 180, 500), rng.uniform(-180, -170, 500), rng.uniform(0, 10, 50)]
    lat = rng.uniform(-20, 20, lon.size)
    path = _write(pd.DataFrame({"lat": lat, "lon": lon}), tmp_path, "parquet")
    unit = unit_from(None, None)
    bbox = (170.0, -20.0, -170.0, 20.0)
    old, new = _old(path, unit, 1, bbox, 40), _new(path, unit, 1, bbox, 40)
    _same(old, new)
    assert new.n_used == 1000 and new.n_dropped == 50


def _error(fn, *args, **kwargs) -> str:
    with pytest.raises(InputError) as err:
        fn(*args, **kwargs)
    return str(err.value)


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_missing_columns_same_errors(tmp_path, kind):
    path = _write(_table(), tmp_path, kind)
    point = unit_from(None, None)
    for kwargs in ({"lat": "nope"}, {"lat": "latitude", "lon": "latitude"}):
        assert _error(_old, path, point, 1, **kwargs) == _error(_new, path, point, 1, **kwargs)
    person = unit_from("who", 2)
    assert "person column 'who' is not in the table" in _error(_new, path, person, 1)
    assert _error(_old, path, person, 1) == _error(_new, path, person, 1)
    no_names = _write(_table().rename(columns={"latitude": "a", "longitude": "b"}), tmp_path, kind)
    assert _error(_old, no_names, point, 1) == _error(_new, no_names, point, 1)


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda df: df.assign(latitude=df.latitude + 100), "no row has a usable latitude"),
        (lambda df: df.assign(longitude=df.longitude - 300), "no row has a usable latitude"),
        (lambda df: df.head(8), "at least 10 are needed"),
        (lambda df: df.assign(latitude=34.0, longitude=-118.0), "all points are identical"),
        (lambda df: df.assign(longitude=df.longitude + 50), "are outside the bounding box"),
        (lambda df: df.assign(latitude=np.nan), "no row has a usable latitude"),
    ],
)
def test_bad_points_same_errors_without_values(tmp_path, edit, fragment):
    df = edit(_table())
    path = _write(df, tmp_path, "parquet")
    point = unit_from(None, None)
    old, new = _error(_old, path, point, 1), _error(_new, path, point, 1)
    assert fragment in new and fragment in old
    assert old.split(" (e.g.")[0] == new.split(". Check")[0] or old == new
    assert "\n" not in new and "e.g." not in new  # one line; no private coordinate quoted


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("bad", ["north", "181", "-180.5", "90.0001", "inf", "-inf", " 1e400 "])
def test_a_coordinate_outside_its_domain_is_dropped_like_a_point_outside_the_bbox(
    tmp_path, kind, bad
):
    """Issue 27: one unusable coordinate (text, out of [-90, 90] / [-180, 180], infinite) is
    never a refusal: both readers drop that row, and F is that of the table without it."""
    df = _table()
    text = df.astype({"latitude": object, "longitude": object})
    text.loc[7, "longitude"] = bad  # row 7: inside the bbox before the edit
    text.loc[8, "latitude"] = bad if bad not in ("181", "-180.5") else "91"
    if kind == "parquet":  # a text column in Parquet (a mixed one cannot be written)
        text = text.astype({"latitude": str, "longitude": str})
    unit = unit_from(None, None)
    new = _new(_write(text, tmp_path, kind), unit, 1)
    _same(_old(_write(text, tmp_path, kind), unit, 1), new)
    clean = _new(_write(df.drop(index=[7, 8]), tmp_path, kind), unit, 1)
    assert np.array_equal(new.F, clean.F) and new.n_used == clean.n_used
    assert new.n_dropped == clean.n_dropped + 2


def test_csv_missing_value_spellings_are_missing(tmp_path):
    df = _table()
    path = tmp_path / "na.csv"
    text = df.to_csv(index=False).splitlines()
    text[5] = "NA," + text[5].split(",", 1)[1]
    text[6] = "nan," + text[6].split(",", 1)[1]
    path.write_text("\n".join(text) + "\n")
    unit = unit_from(None, None)
    _same(_old(path, unit, 1), _new(path, unit, 1))


def test_text_after_the_csv_sniffer_sample_is_a_missing_value(tmp_path):
    """DuckDB types a column from a sample; a text far down used to make the scan unavailable.
    Coordinates are read as text and converted by TRY_CAST: the row is dropped, as in memory."""
    df = _table(n=50_000)
    df["latitude"] = df["latitude"].astype(object)
    df.loc[len(df) - 5, "latitude"] = "north"
    path = _write(df, tmp_path, "csv")
    unit = unit_from(None, None)
    _same(_old(path, unit, 1), _new(path, unit, 1))
