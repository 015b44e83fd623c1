"""Tables read in place with their declared schema (core.data.relation, core.dpsql.tables): a
registered CSV or Parquet table is read by DuckDB where it lies, never loaded into Python, with
the types its schema declares; it releases exactly what the same data given as a frame with the
same schema releases (same seed); and the locked sandbox can open those files and no other."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

import core.dpsql.catalog as catalog_module
from core.data.declared import ColumnFact, ColumnType, TableSchema
from core.data.relation import propose
from core.dpsql.catalog import Catalog
from core.dpsql.check.lineage import catalog_schema
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.dpsql.tables import catalog_of_files
from core.privacy import Noise
from tests.dpsql.helpers import release_of
from tests.engine_corpus import CORPUS, query, tables


def _write(frame: pd.DataFrame, path):
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, row_group_size=500)
    return path


@pytest.fixture(scope="module", params=[".parquet", ".csv"])
def files(request, tmp_path_factory) -> dict[str, object]:
    """The engine corpus written to files (both formats), plus an integer column with NULLs and
    a float column with NaN and ±inf (which reading turns into NULL)."""
    root = tmp_path_factory.mktemp("scan")
    private, public = tables()
    orders = private["orders"].copy()
    n = len(orders)
    orders["maybe_qty"] = pd.array([None if i % 9 == 0 else i % 7 for i in range(n)], "Int64")
    orders["odd"] = np.where(np.arange(n) % 11 == 0, np.inf, orders["amount"])
    out = {name: _write(f, root / f"{name}{request.param}") for name, f in
           {**private, "orders": orders, **public}.items()}  # fmt: skip
    return out


def _declared(path) -> TableSchema:
    """The owner's schema: the proposal, with `odd` declared a float (DuckDB's CSV sniffer
    proposes text for a column holding 'inf'; the owner corrects it)."""
    schema = propose(path)
    if schema.column("odd") is not None:
        schema = schema.with_column(ColumnFact("odd", ColumnType.FLOAT))
    return schema


def _in_place(files) -> Catalog:
    return catalog_of_files(
        [("people", files["people"]), ("orders", files["orders"])],
        [("cats", files["cats"])],
        uid="uid",
        schemas={name: _declared(files[name]) for name in ("people", "orders", "cats")},
    )


def _as_frames(files) -> Catalog:
    """The same tables given as frames with the same declared schemas (the engine converts the
    frames into them)."""
    catalog = Catalog()
    for name in ("people", "orders"):
        path = files[name]
        frame = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
        catalog.add_private(name, frame, "uid", declared=_declared(path))
    cats = files["cats"]
    frame = pd.read_csv(cats) if cats.suffix == ".csv" else pd.read_parquet(cats)
    catalog.add_public("cats", frame, declared=_declared(cats))
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


def test_private_tables_are_read_in_place_not_loaded(files, monkeypatch):
    def no_loading(*args, **kwargs):
        raise AssertionError("a private table was loaded into Python")

    monkeypatch.setattr(catalog_module, "load_table", no_loading)
    catalog = _in_place(files)
    spec = catalog.get("orders")
    assert spec.in_place and spec.frame is None and spec.source == files["orders"].resolve()
    engine = Engine(catalog)
    try:
        assert engine.fetch("SELECT COUNT(*) FROM orders")[1] == [(len(tables()[0]["orders"]),)]
    finally:
        engine.close()


def test_the_engine_presents_the_declared_types(files):
    """What the checks see (the declared schema) is what DuckDB binds, for both forms."""
    for catalog in (_in_place(files), _as_frames(files)):
        engine = Engine(catalog)
        try:
            for name, declared in catalog_schema(catalog).items():
                described = engine.con.execute(f"DESCRIBE SELECT * FROM {name}").fetchall()
                assert {r[0].lower(): r[1] for r in described} == declared
        finally:
            engine.close()


@pytest.mark.parametrize("name", sorted(CORPUS) + sorted(EXTRA))
def test_in_place_release_equals_the_frame_release(files, name):
    """Same seed, same query, same declared schema: the released rows are identical whether
    the table is read in place or given as a frame."""
    results = []
    for build in (_as_frames, _in_place):
        noise = Noise.seeded(4)
        catalog = build(files)
        engine = Engine(catalog)
        try:
            results.append(release_of(prepare(_query(name), catalog, noise), engine, noise))
        finally:
            engine.close()
    framed, in_place = (r.table for r in results)
    assert len(framed) > 0
    pd.testing.assert_frame_equal(in_place, framed)


def test_the_sandbox_opens_the_registered_files_and_no_other(files, tmp_path):
    """An attacker's generated SQL (the defence behind the checks): other files, globs, the
    file's directory, new settings and databases are all refused once the sandbox is locked."""
    other = tmp_path / "secret.parquet"
    pd.DataFrame({"s": [42]}).to_parquet(other)
    (tmp_path / "secret.csv").write_text("s\n42\n")
    next_door = files["orders"].parent / "next_door.csv"
    next_door.write_text("s\n42\n")
    engine = Engine(_in_place(files))
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


def test_public_tables_are_loaded_in_their_declared_types(files):
    public = _in_place(files).get("cats")
    assert not public.private and public.frame is not None and len(public.frame) == 10


def test_a_stored_pandas_index_is_left_out(tmp_path):
    frame = pd.DataFrame({"uid": [1, 2, 3, 4], "x": [1.0, 2.0, np.nan, 4.0]}).iloc[[0, 2, 3]]
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)  # a non-range index is stored as a column
    assert "__index_level_0__" in duckdb.sql(f"DESCRIBE SELECT * FROM '{path}'").df().values
    engine = Engine(catalog_of_files([("t", path)], uid="uid"))
    try:
        names, rows = engine.fetch("SELECT * FROM t ORDER BY uid")
    finally:
        engine.close()
    assert names == ["uid", "x"] and rows == [(1, 1.0), (3, None), (4, 4.0)]
