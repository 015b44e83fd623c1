"""Uploads read where they lie on the DP SQL page (issue 29 item 2): the stored file is the
catalogue's table (in place, a schema proposed once per file and labelled inferred), never a
pandas frame; two sessions with the same bytes share the one file and the one proposal; showing
the page reads no whole file; the release is the one the same data gave as a frame, seed for
seed; a bad upload gets one line naming the file."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.data.declared import SchemaSource
from core.data.loading import load_table
from core.dpsql.demos import example_query
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.dpsql.tables import catalog_of_frames
from core.privacy import Noise
from tests.dpsql.helpers import release_of

PAGE = "pages/dp_sql.py"
TRIPS = b"rider,zone,fare,amount\n" + b"".join(
    f"r{i % 400},z{i % 3},{i % 17},{(i * 7) % 100 / 10}\n".encode() for i in range(4800)
)
UNIT_COLUMN, UNIT_ROW = "A column says whose data each row is", "Each row is one person"


def _errors(at) -> list[str]:
    return [e.value for e in at.error if "NON-PRIVATE" not in e.value]


def _upload(at, name="trips.csv", data=TRIPS, unit=UNIT_COLUMN):
    at.radio(key="dpsql_source").set_value("Upload CSV/Parquet").run()
    at.file_uploader(key="dpsql_upload").set_value([(name, data, "text/csv")]).run()
    if _errors(at):
        return at
    next(r for r in at.radio if r.label == "What is the privacy unit?").set_value(unit).run()
    if unit == UNIT_COLUMN:
        next(s for s in at.selectbox if (s.key or "").startswith("dpsql_uid_")).set_value("rider")
    return at.run()


@pytest.fixture
def catalogs(monkeypatch):
    """Every catalogue the DP SQL page prepares a query on, in order."""
    import ui.sql.engine

    seen, prepare_page = [], ui.sql.engine.prepare

    def spy(sql, catalog, noise):
        seen.append(catalog)
        return prepare_page(sql, catalog, noise)

    monkeypatch.setattr(ui.sql.engine, "prepare", spy)
    return seen


@pytest.fixture
def fresh_schemas():
    """A fresh server process: no upload's schema proposed yet."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()


def test_the_catalogue_reads_the_stored_upload_in_place(
    app_test, registry_dir, catalogs, fresh_schemas
):
    from ui import upload_store

    at = _upload(app_test(PAGE).run())
    assert not at.exception and not _errors(at), _errors(at)
    spec = catalogs[-1].get("trips")
    assert spec.in_place and spec.frame is None  # no pandas frame of the upload
    assert spec.source == (upload_store.uploads_root() / hashlib.sha256(TRIPS).hexdigest())
    assert spec.schema.source is SchemaSource.INFERRED  # owner mode: proposed, labelled
    assert spec.schema.types() == {
        "rider": "VARCHAR", "zone": "VARCHAR", "fare": "BIGINT", "amount": "DOUBLE",
    }  # fmt: skip
    at.button(key="dpsql_run").click().run()
    assert not at.exception and not _errors(at), _errors(at)
    assert "Partitions released" in {m.label for m in at.metric}


def test_an_analyst_cannot_upload(app_test, registry_dir, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test(PAGE).run()
    assert "Upload CSV/Parquet" not in at.radio(key="dpsql_source").options


def test_two_sessions_with_the_same_bytes_share_one_file_and_one_proposed_schema(
    app_test, registry_dir, catalogs, fresh_schemas, monkeypatch
):
    import ui.upload_tables
    from ui import upload_store

    proposals, propose = [], ui.upload_tables.inferred
    monkeypatch.setattr(
        ui.upload_tables, "inferred", lambda path: proposals.append(path) or propose(path)
    )
    first = _upload(app_test(PAGE).run(), "trips.csv")
    one = catalogs[-1].get("trips")
    second = _upload(app_test(PAGE).run(), "same-bytes.csv")  # another session, same bytes
    assert not first.exception and not second.exception and not _errors(second)
    assert len(proposals) == 1, proposals  # proposed once, for both sessions
    stored = [p.name for p in upload_store.uploads_root().iterdir() if p.name[0] != "."]
    assert stored == [hashlib.sha256(TRIPS).hexdigest()]
    two = catalogs[-1].get("same_bytes")
    assert one.source == two.source and one.schema == two.schema


def test_showing_the_page_reads_no_whole_upload(app_test, registry_dir, fresh_schemas, monkeypatch):
    """The page (columns, owner preview, example query, a run) never parses the upload with
    pandas: patched to fail on any stored upload."""
    from ui import upload_store

    at = app_test(PAGE).run()  # the demo first (its own cached frames)

    def refuse(reader):
        def read(source, *args, **kwargs):
            if str(upload_store.uploads_root()) in str(source):
                raise AssertionError(f"the whole upload was read by pandas: {source}")
            return reader(source, *args, **kwargs)

        return read

    monkeypatch.setattr(pd, "read_csv", refuse(pd.read_csv))
    monkeypatch.setattr(pd, "read_parquet", refuse(pd.read_parquet))
    _upload(at)
    assert not at.exception and not _errors(at), _errors(at)
    previews = [d.value for d in at.dataframe if list(d.value.columns)[:2] == ["rider", "zone"]]
    assert previews and len(previews[0]) == 5  # the first rows, read in place
    assert "FROM trips" in at.text_area(key="dpsql_query").value
    at.button(key="dpsql_run").click().run()
    assert not at.exception and not _errors(at), _errors(at)
    assert "Partitions released" in {m.label for m in at.metric}


@pytest.mark.parametrize("unit", [UNIT_COLUMN, UNIT_ROW])
def test_the_release_is_the_one_the_same_data_gave_as_a_frame(
    app_test, registry_dir, catalogs, fresh_schemas, unit
):
    """Seed for seed, the page's in-place catalogue releases what the frame catalogue (the page
    before this change: the upload loaded with pandas) released, and declares the same types."""
    at = _upload(app_test(PAGE).run(), unit=unit)
    assert not at.exception and not _errors(at), _errors(at)
    in_place = catalogs[-1]
    row = unit == UNIT_ROW
    frames = catalog_of_frames(
        {"trips": load_table(TRIPS, name="trips.csv")}, set(), None if row else "rider",
        row_is_unit=row,
    )  # fmt: skip
    assert in_place.get("trips").schema.types() == frames.get("trips").schema.types()
    sql = example_query(frames)
    sql = sql.replace("rider", "zone") if row else sql  # by zone: 400 riders' groups are small
    released = []
    for catalog in (in_place, frames):
        noise = Noise.seeded(11)
        prepared = prepare(sql, catalog, noise)
        engine = Engine(catalog)
        try:
            released.append(release_of(prepared, engine, noise).table)
        finally:
            engine.close()
    assert len(released[0]) > 0
    pd.testing.assert_frame_equal(released[0], released[1])


def test_a_parquet_upload_is_read_in_place_too(app_test, registry_dir, catalogs, fresh_schemas):
    buffer = io.BytesIO()
    load_table(TRIPS, name="t.csv").to_parquet(buffer, index=False)
    at = _upload(app_test(PAGE).run(), "trips.parquet", buffer.getvalue())
    assert not at.exception and not _errors(at), _errors(at)
    spec = catalogs[-1].get("trips")
    assert spec.in_place and spec.schema.types()["fare"] == "BIGINT"
    at.button(key="dpsql_run").click().run()
    assert "Partitions released" in {m.label for m in at.metric}, _errors(at)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"rider,zone\n", "has a header but no data rows"),
        (b"rider,zone\nr1,caf\xe9\n", "not UTF-8"),
        ("rider,zone\nr1,a\n".encode("utf-16"), "UTF-16"),
        (b"", "is empty"),
        (b",rider\n0,r1\n", "bad.csv has no header line naming every column"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8, "looks binary"),
    ],
)
def test_a_bad_upload_gets_one_line_naming_the_file(
    app_test, registry_dir, fresh_schemas, data, words
):
    at = _upload(app_test(PAGE).run(), "bad.csv", data)
    assert not at.exception
    errors = _errors(at)
    assert len(errors) == 1 and words in errors[0], errors
    assert "\n" not in errors[0] and hashlib.sha256(data).hexdigest() not in errors[0]


@pytest.mark.parametrize("statistic", ["sum", "mean"])
@pytest.mark.parametrize("unit", ["rider", None])
def test_the_bounds_helper_reads_the_same_values_in_place(tmp_path, statistic, unit):
    """The bounds helper's one value per unit, summed by DuckDB over an upload read in place,
    is the frame's (`unit_values`), missing values and all."""
    from core.data.relation import inferred
    from core.planning.bounds import unit_values, unit_values_in_place

    path = Path(tmp_path / "t.csv")
    path.write_bytes(TRIPS.replace(b",3,", b",,") + b",z1,4,1.5\n")  # missing values, no unit
    frame = load_table(path)
    got = unit_values_in_place(path, inferred(path), "fare", unit, statistic)
    want = unit_values(frame, "fare", unit, statistic)
    np.testing.assert_allclose(np.sort(got), np.sort(want))


def test_the_owner_checks_of_the_unit_column_are_counted_in_place(
    app_test, registry_dir, fresh_schemas
):
    """The owner's checks of the chosen unit column say what they said on the frame."""
    from core.dpsql.catalog import unit_column_concerns

    data = b"rider,zone\n" + b"".join(
        f"{'' if i % 10 == 0 else f'r{i % 2}'},z{i % 3}\n".encode() for i in range(300)
    )
    at = _upload(app_test(PAGE).run(), "few.csv", data)
    assert not at.exception and not _errors(at), _errors(at)
    shown = [w.value for w in at.warning if w.value.startswith("Owner check")]
    want = unit_column_concerns("few", load_table(data, name="few.csv"), "rider")
    assert len(want) == 2 and shown == [
        f"Owner check (reads the data, not released): {c}" for c in want
    ]
