"""Scanned tables (core.dpsql.execute.scan): a private Parquet table is read by DuckDB where it
lies, never loaded into Python, releases exactly what the loaded table releases (same seed), and
the locked sandbox can open that file and no other."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

import core.dpsql.catalog as catalog_module
from core.dpsql.catalog import Catalog
from core.dpsql.check.lineage import catalog_schema
from core.dpsql.execute.engine import Engine
from core.dpsql.parquet_schema import add_scanned
from core.dpsql.service import prepare
from core.privacy import Noise
from tests.dpsql.helpers import release_of
from tests.engine_corpus import CORPUS, query, tables


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, object]:
    """The engine corpus written to files, plus an extra column pandas loads as float (an
    integer column with a NULL) and one with NaN and ±inf, which loading turns into NULL."""
    root = tmp_path_factory.mktemp("scan")
    private, public = tables()
    orders = private["orders"].copy()
    n = len(orders)
    orders["maybe_qty"] = pd.array([None if i % 9 == 0 else i % 7 for i in range(n)], "Int64")
    orders["odd"] = np.where(np.arange(n) % 11 == 0, np.inf, orders["amount"])
    out = {}
    for name, frame in {**private, "orders": orders}.items():
        path = root / f"{name}.parquet"
        frame.to_parquet(path, row_group_size=500)
        out[name] = path
    out["cats"] = public["cats"]
    return out


def _catalog(files, scanned: bool) -> Catalog:
    catalog = Catalog()
    for name in ("people", "orders"):
        if scanned:
            add_scanned(catalog, name, files[name], "uid", private=True)
        else:
            catalog.add_file(name, files[name], "uid", private=True)
    catalog.add_public("cats", files["cats"])
    return catalog


EXTRA = {
    "int_with_null": "SELECT WITH ANONYMIZATION OPTIONS ({opt}) category, "
    "ANON_SUM(maybe_qty, 0, 5) AS s, ANON_COUNT(maybe_qty, 5) AS n FROM orders GROUP BY category",
    "nan_and_inf": "SELECT WITH ANONYMIZATION OPTIONS ({opt}) category, "
    "ANON_AVG(odd, 0, 80) AS a, ANON_COUNT(odd, 5) AS n FROM orders GROUP BY category",
}
OPT = "epsilon = 1, delta = 1e-5, max_groups_contributed = 2, max_rows_per_group = 5"


def _query(name: str) -> str:
    return query(name) if name in CORPUS else EXTRA[name].format(opt=OPT)


def test_private_parquet_is_scanned_not_loaded(files, monkeypatch):
    def no_loading(*args, **kwargs):
        raise AssertionError("a scanned table was loaded")

    monkeypatch.setattr(catalog_module, "load_table", no_loading)
    catalog = Catalog()
    spec = add_scanned(catalog, "orders", files["orders"], "uid", private=True)
    assert spec.source == files["orders"].resolve() and len(spec.frame) <= 2
    engine = Engine(catalog)
    try:
        assert engine.fetch("SELECT COUNT(*) FROM orders")[1] == [(len(tables()[0]["orders"]),)]
    finally:
        engine.close()


def test_scanned_schema_equals_the_loaded_schema(files):
    """The checks see the same column types either way, and so does DuckDB."""
    loaded, scanned = _catalog(files, False), _catalog(files, True)
    assert catalog_schema(scanned) == catalog_schema(loaded)
    a, b = Engine(loaded), Engine(scanned)
    try:
        for name in ("people", "orders"):
            sql = f"DESCRIBE SELECT * FROM {name}"
            assert b.con.execute(sql).fetchall() == a.con.execute(sql).fetchall()
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("name", sorted(CORPUS) + sorted(EXTRA))
def test_scanned_release_equals_the_loaded_release(files, name):
    """Same seed, same query: the released rows are identical to those of the loaded table
    (NaN/inf as NULL, an integer column with a NULL as DOUBLE, the same sampling)."""
    results = []
    for scanned in (False, True):
        noise = Noise.seeded(4)
        catalog = _catalog(files, scanned)
        engine = Engine(catalog)
        try:
            results.append(release_of(prepare(_query(name), catalog, noise), engine, noise))
        finally:
            engine.close()
    loaded, scanned = (r.table for r in results)
    assert len(loaded) > 0
    pd.testing.assert_frame_equal(scanned, loaded)


def test_the_sandbox_opens_the_scanned_file_and_no_other(files, tmp_path):
    """An attacker's generated SQL (the defence behind the checks): other files, globs, the
    file's directory, new settings and databases are all refused once the sandbox is locked."""
    other = tmp_path / "secret.parquet"
    pd.DataFrame({"s": [42]}).to_parquet(other)
    (tmp_path / "secret.csv").write_text("s\n42\n")
    next_door = files["orders"].parent / "next_door.csv"
    next_door.write_text("s\n42\n")
    engine = Engine(_catalog(files, True))
    con = engine.con
    try:
        assert con.execute("SELECT COUNT(*) FROM orders").fetchone()[0] > 0
        for sql in (
            f"SELECT * FROM read_parquet('{other}')",
            f"SELECT * FROM '{other}'",
            f"SELECT * FROM read_csv('{tmp_path / 'secret.csv'}')",
            f"SELECT * FROM read_csv_auto('{next_door}')",
            f"SELECT * FROM read_parquet('{files['orders'].parent}/*.parquet')",
            f"SELECT * FROM glob('{files['orders'].parent}/*')",
            f"SELECT * FROM read_text('{next_door}')",
            f"SET allowed_paths = ['{other}']",
            f"SET allowed_directories = ['{tmp_path}']",
            "SET enable_external_access = true",
            f"ATTACH '{tmp_path / 'o.db'}' AS o",
            f"COPY (SELECT 1) TO '{tmp_path / 'out.csv'}'",
        ):
            with pytest.raises(duckdb.Error):
                con.cursor().execute(sql).fetchall()
        assert not (tmp_path / "out.csv").exists()
    finally:
        engine.close()


def test_csv_and_public_tables_are_still_loaded(files, tmp_path):
    csv = tmp_path / "t.csv"
    pd.DataFrame({"uid": [1, 2], "x": [3, 4]}).to_csv(csv, index=False)
    catalog = Catalog()
    assert add_scanned(catalog, "t", csv, "uid", private=True).source is None
    public = add_scanned(catalog, "p", files["people"], None, private=False)
    assert public.source is None and len(public.frame) == 400


def test_a_stored_pandas_index_is_left_out_as_loading_does(tmp_path):
    frame = pd.DataFrame({"uid": [1, 2, 3, 4], "x": [1.0, 2.0, np.nan, 4.0]}).iloc[[0, 2, 3]]
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)  # a non-range index is stored as a column
    assert "__index_level_0__" in duckdb.sql(f"DESCRIBE SELECT * FROM '{path}'").df().values
    catalog = Catalog()
    add_scanned(catalog, "t", path, "uid", private=True)
    engine = Engine(catalog)
    try:
        names, rows = engine.fetch("SELECT * FROM t ORDER BY uid")
    finally:
        engine.close()
    assert names == ["uid", "x"] and rows == [(1, 1.0), (3, None), (4, 4.0)]
