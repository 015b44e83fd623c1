"""Loading and validation: one test per bad-input class, each checking the message names the problem."""

import io

import numpy as np
import pandas as pd
import pytest

from core.data import detect_lat_lon, load_table, validate_points
from core.errors import InputError

GOOD_CSV = b"name,lat,lon\na,52.5,13.4\nb,48.1,11.6\n"


def test_loads_csv_from_bytes_and_path(tmp_path):
    df = load_table(GOOD_CSV, name="points.csv")
    assert list(df.columns) == ["name", "lat", "lon"] and len(df) == 2
    path = tmp_path / "points.csv"
    path.write_bytes(GOOD_CSV)
    assert load_table(path).equals(df)


def test_loads_parquet_bytes():
    buf = io.BytesIO()
    pd.DataFrame({"lat": [1.0, 2.0], "lon": [3.0, 4.0]}).to_parquet(buf)
    df = load_table(buf.getvalue(), name="upload")  # detected by magic bytes, not the name
    assert df["lon"].tolist() == [3.0, 4.0]


def test_single_column_csv_keeps_its_header():
    df = load_table(b"sa\na\nb\n", name="x.csv")
    assert list(df.columns) == ["sa"] and df["sa"].tolist() == ["a", "b"]


def test_semicolon_separated_csv_is_sniffed():
    df = load_table(b"lat;lon\n1;2\n3;4\n", name="x.csv")
    assert list(df.columns) == ["lat", "lon"]


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "is empty"),
        (b"   \n\n", "is empty"),
        (b"lat,lon\n", "no data rows"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "looks binary"),
        ("lat,lon\n1,2\n".encode("utf-16"), "the file is UTF-16 text; save it as UTF-8"),
        (b"lat,lon\n\xff\xfe1,2\n", "not UTF-8"),
        (b"PAR1garbage-not-parquet", "could not be read as Parquet"),
    ],
)
def test_bad_files_are_named(data, message):
    with pytest.raises(InputError, match=message):
        load_table(data, name="upload.csv")


def test_too_large_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="over the 0 MB limit"):
        load_table(GOOD_CSV, name="big.csv", max_bytes=10)
    path = tmp_path / "big.csv"
    path.write_bytes(GOOD_CSV)
    with pytest.raises(InputError, match="big.csv is .* over"):
        load_table(path, max_bytes=10)


def test_a_path_has_no_upload_limit_but_uploaded_bytes_do(tmp_path, monkeypatch):
    """The CLI and registered datasets read files of any size (issue 22); the page's uploads
    keep Streamlit's limit."""
    import core.data.loading as loading

    monkeypatch.setattr(loading, "MAX_UPLOAD_BYTES", 10)
    path = tmp_path / "big.csv"
    path.write_bytes(GOOD_CSV)
    assert len(GOOD_CSV) > 10 and len(load_table(path)) > 0
    with pytest.raises(InputError, match="over the"):
        load_table(GOOD_CSV, name="big.csv")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_text_is_called_utf16_not_binary(tmp_path, encoding):
    """With or without a byte-order mark, from bytes or a path (issue 29)."""
    data = "lat,lon,name\n1,2,a\n3,4,b\n".encode(encoding)
    with pytest.raises(InputError, match="the file is UTF-16 text; save it as UTF-8. Fix:"):
        load_table(data, name="upload.csv")
    path = tmp_path / "p.csv"
    path.write_bytes(data)
    with pytest.raises(InputError, match="UTF-16 text") as err:
        load_table(path)
    assert "binary" not in str(err.value)


def test_a_file_of_nul_bytes_is_refused_from_a_bounded_prefix(tmp_path, monkeypatch):
    """The sniff reads a prefix, never the whole file first (a 2 GB file of NUL bytes took
    over 30 s): a sparse file, and reading it whole would fail the test."""
    from pathlib import Path

    path = tmp_path / "nul.csv"
    with path.open("wb") as fh:
        fh.truncate(2 * 1024**3)  # sparse: no disk used

    def whole(self):
        raise AssertionError("read the whole file before sniffing it")

    monkeypatch.setattr(Path, "read_bytes", whole)
    with pytest.raises(InputError, match="looks binary"):
        load_table(path)


def test_sizes_are_shown_in_the_uploaders_unit():
    """Streamlit's uploader says "200 MB" for 200 MiB: a refusal counts the same way."""
    from core.data.loading import MAX_UPLOAD_BYTES, _too_large

    text = _too_large("big.csv", 221_000_000, MAX_UPLOAD_BYTES)
    assert "210.8 MB, over the 200 MB limit" in text


def test_missing_file_is_named(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        load_table(tmp_path / "nope.csv")


def test_lat_lon_detection_by_common_names():
    for lat, lon in [
        ("lat", "lon"),
        ("Latitude", "Longitude"),
        ("y", "x"),
        ("LAT", "lng"),
        ("lat", "long"),
    ]:
        df = pd.DataFrame({lat: [1.0], lon: [2.0]})
        assert detect_lat_lon(df) == (lat, lon)


def test_explicit_columns_override_detection():
    df = pd.DataFrame({"lat": [1.0], "lon": [2.0], "py": [3.0], "px": [4.0]})
    assert detect_lat_lon(df, lat="py", lon="px") == ("py", "px")


def test_missing_coordinate_column_is_named():
    with pytest.raises(InputError, match="could not find the longitude column"):
        detect_lat_lon(pd.DataFrame({"lat": [1.0], "value": [2]}))
    with pytest.raises(InputError, match="latitude column 'nope' is not in the table"):
        detect_lat_lon(pd.DataFrame({"lat": [1.0], "lon": [2.0]}), lat="nope")


def test_unusable_coordinates_are_dropped_and_counted_never_refused():
    """Issue 27: a coordinate that is missing, not a number, not finite or outside its declared
    domain ([-90, 90] / [-180, 180]) is dropped like a point outside the bbox; refusing it
    would make the outcome depend on one private row."""
    df = pd.DataFrame(
        {
            "lat": ["1.0", "north", 3.0, 4.0, np.nan, 91.0, 6.0, "inf", -90.0, 8.0],
            "lon": [1.0, 2.0, None, 4.0, 5.0, 6.0, 181.0, 7.0, -180.0, -180.0001],
        }
    )
    pts = validate_points(df, "lat", "lon")
    assert pts.n_unusable == 7
    assert pts.lat.tolist() == [1.0, 4.0, -90.0] and pts.lon.tolist() == [1.0, 4.0, -180.0]
    assert pts.kept.tolist() == [True, False, False, True] + [False] * 4 + [True, False]


def test_only_a_missing_column_is_refused():
    with pytest.raises(InputError, match="'nope' is not in the table"):
        validate_points(pd.DataFrame({"lat": [1.0], "lon": [2.0]}), "nope", "lon")


@pytest.mark.parametrize(
    "text",
    [
        "a,b\n1,x\n2,y\n3,z\n4,w\n5,v\n",
        "a,b\n1,x\n2,y\n3,z\nfour,w\n5,v\n",  # numbers in the first block, text later
        "a,b\n1,x\n2,y\n,z\n4.5,w\n5,\n",  # an empty cell and a decimal in later blocks
    ],
)
def test_a_file_read_in_blocks_gives_the_frame_of_one_read(tmp_path, monkeypatch, text):
    """Files are parsed in blocks of rows (bounded parser memory); the types are the whole
    file's, as with one read."""
    import core.data.loading as loading

    monkeypatch.setattr(loading, "CSV_CHUNK_ROWS", 2)
    path = tmp_path / "t.csv"
    path.write_text(text)
    got = load_table(path)
    want = pd.read_csv(io.StringIO(text))
    pd.testing.assert_frame_equal(got, want)
