"""`dpx sql|htf|balance --engine spark` end to end, in-process (the session's SparkSession is
reused by `core.sparkutil.spark_session`): same results as the default engines."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.dpsql.demos import SQL_DIR


def _json(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_dpx_sql_engine_spark_equals_duckdb(spark, capsys):
    """Same seed: the same salt, the same cross-user table, the same noise draws in the same
    order (rows are keyed and ordered before release), so the released rows are identical."""
    query = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
        "max_groups_contributed = 1) dept, ANON_COUNT(*, 5) AS c, ANON_SUM(amount, 0, 100) AS s "
        "FROM Employee E JOIN Orders O USING (uid) GROUP BY dept"
    )
    base = [
        "sql",
        "--table", f"Employee={SQL_DIR / 'employee.csv'}",
        "--table", f"Orders={SQL_DIR / 'orders.csv'}",
        "--uid", "uid", "--query", query, "--seed", "3",
    ]  # fmt: skip
    duck = _json(capsys, base)
    sparky = _json(capsys, [*base, "--engine", "spark"])
    assert duck["rows"] and duck["rows"] == sparky["rows"]
    assert duck["epsilon_spent"] == sparky["epsilon_spent"] == 1


def test_dpx_htf_engine_spark_same_release(spark, capsys, tmp_path):
    rng = np.random.default_rng(8)
    path = tmp_path / "pts.csv"
    pd.DataFrame({"lat": rng.uniform(40, 41, 2000), "lon": rng.uniform(-74, -73, 2000)}).to_csv(
        path, index=False
    )
    base = ["htf", str(path), "--lat", "lat", "--lon", "lon", "--bbox", "-74,40,-73,41",
            "--grid", "16", "--epsilon", "1", "--seed", "2"]  # fmt: skip
    duck = _json(capsys, base)
    sparky = _json(capsys, [*base, "--engine", "spark"])
    # Each run is its own recorded release: everything but its registry id is the same.
    assert duck.pop("registry")["release_id"] != sparky.pop("registry")["release_id"]
    assert duck == sparky


def test_dpx_balance_engine_spark_same_plan(spark, capsys, tmp_path):
    path = tmp_path / "t.csv"
    values = ["flu"] * 30 + ["cold"] * 50 + ["hiv"] * 7 + [None] * 4 + ["cold"] * 9
    pd.DataFrame({"sa": values, "age": range(len(values))}).to_csv(path, index=False)
    base = ["balance", str(path), "--sa", "sa", "--rho1", "1/3", "--rho2", "2/3",
            "--missing", "drop"]  # fmt: skip
    assert _json(capsys, base) == _json(capsys, [*base, "--engine", "spark"])


@pytest.mark.parametrize("missing", ["drop", "category"])
def test_balance_counts_equal_pandas(spark, tmp_path, missing):
    from core.balancing.records import encode_sa
    from core.balancing.spark_pass import count_values, read_table

    path = tmp_path / "t.csv"
    frame = pd.DataFrame({"sa": ["b", "a", None, "c", "a", "b", "a", None]})
    frame.to_csv(path, index=False)
    expected = encode_sa(pd.read_csv(path)["sa"], missing=missing).counts()
    got = count_values(read_table(spark, path), "sa", missing=missing)
    assert list(got.items()) == list(expected.items())  # same values, counts and order


def _error(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_spark_bad_input_is_one_line_exit_2(spark, capsys, tmp_path):
    points = tmp_path / "pts.csv"
    pd.DataFrame({"lat": ["40.5"] * 30 + ["north"], "lon": ["-73.5"] * 31}).to_csv(
        points, index=False
    )
    htf = ["htf", "--bbox", "-74,40,-73,41", "--epsilon", "1", "--engine", "spark"]
    assert "file not found" in _error(
        capsys, [*htf[:1], str(tmp_path / "nope.csv"), "--lat", "lat", "--lon", "lon", *htf[1:]]
    )
    assert "latitude column 'latitude' is not in the table" in _error(
        capsys, [*htf[:1], str(points), "--lat", "latitude", "--lon", "lon", *htf[1:]]
    )
    # 'north' is dropped like a point outside the bbox (issue 27): 30 identical points remain
    assert "identical" in _error(
        capsys, [*htf[:1], str(points), "--lat", "lat", "--lon", "lon", *htf[1:]]
    )
    assert "not a Spark master URL" in _error(
        capsys,
        [*htf[:1], str(points), "--lat", "lat", "--lon", "lon", *htf[1:], "--spark-master", "x"],
    )
    table = tmp_path / "t.csv"
    pd.DataFrame({"sa": ["a", "b"] * 5}).to_csv(table, index=False)
    bal = ["balance", str(table), "--rho1", "0.3", "--rho2", "0.6", "--engine", "spark"]
    assert "'disease' not found" in _error(capsys, [*bal, "--sa", "disease"])
    garbled = tmp_path / "g.parquet"
    garbled.write_bytes(b"not a parquet file at all")
    bal[1] = str(garbled)
    assert "Spark could not count the values" in _error(capsys, [*bal, "--sa", "sa"])


def test_no_java_or_pyspark_is_exit_2_for_every_command(capsys, tmp_path, monkeypatch):
    import core.sparkutil as sparkutil

    monkeypatch.setattr(sparkutil, "spark_unavailable_reason", lambda: "no Java runtime found")
    table = tmp_path / "t.csv"
    pd.DataFrame(
        {"uid": [1, 2], "sa": ["a", "b"], "lat": [40.1, 40.2], "lon": [-73.1, -73.2]}
    ).to_csv(table, index=False)
    query = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
        "max_groups_contributed = 1) ANON_COUNT(*, 1) AS c FROM t"
    )
    for argv in (
        ["sql", "--table", f"t={table}", "--uid", "uid", "--query", query],
        ["htf", str(table), "--lat", "lat", "--lon", "lon", "--bbox", "-74,40,-73,41",
         "--epsilon", "1"],
        ["balance", str(table), "--sa", "sa", "--rho1", "0.3", "--rho2", "0.6"],
    ):  # fmt: skip
        assert "Spark engine is not available: no Java" in _error(
            capsys, [*argv, "--engine", "spark"]
        )


def test_spark_query_past_the_time_limit_is_stopped(spark):
    """The watchdog cancels the query's Spark jobs (also a job that starts after the deadline)
    and reports DPX-E003, like the DuckDB engine."""
    from core.dpsql.catalog import Catalog
    from core.dpsql.execute.spark_engine import SparkEngine
    from core.dpsql.limits import ExecutionStopped

    catalog = Catalog()
    catalog.add_public("t", pd.DataFrame({"x": range(5000)}))
    engine = SparkEngine(catalog, session=spark, timeout_s=0.5)
    slow = (  # 1.25e11 row triples: hours on this machine, unless cancelled
        "SELECT COUNT(*) AS n FROM t AS a CROSS JOIN t AS b CROSS JOIN t AS c "
        "WHERE HASH(a.x, b.x, c.x) % 7 = 0"
    )
    try:
        with pytest.raises(ExecutionStopped, match="DPX-E003"):
            engine.fetch(slow)
        engine.timeout_s = 600.0
        names, rows = engine.fetch("SELECT 1 AS one")  # the engine still works afterwards
        assert rows == [(1,)]
    finally:
        engine.close()


def test_dpx_sql_spark_reads_parquet_tables_without_loading_them(
    spark, capsys, tmp_path, monkeypatch
):
    """Parquet tables are read with their schemas (core.dpsql.tables): the driver never loads
    them into pandas (no size limit), and the release equals DuckDB's on the CSVs."""
    import core.dpsql.catalog as catalog_module

    files = {}
    for name in ("employee", "orders"):
        files[name] = tmp_path / f"{name}.parquet"
        pd.read_csv(SQL_DIR / f"{name}.csv").to_parquet(files[name])
    query = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
        "max_groups_contributed = 1) dept, ANON_COUNT(*, 5) AS c, ANON_SUM(amount, 0, 100) AS s "
        "FROM Employee E JOIN Orders O USING (uid) GROUP BY dept"
    )
    common = ["sql", "--uid", "uid", "--query", query, "--seed", "3"]
    duck = _json(capsys, [*common, "--table", f"Employee={SQL_DIR / 'employee.csv'}",
                          "--table", f"Orders={SQL_DIR / 'orders.csv'}"])  # fmt: skip

    def no_loading(*args, **kwargs):
        raise AssertionError("a Parquet table was loaded into the driver")

    monkeypatch.setattr(catalog_module, "load_table", no_loading)
    sparky = _json(capsys, [*common, "--table", f"Employee={files['employee']}",
                            "--table", f"Orders={files['orders']}", "--engine", "spark"])  # fmt: skip
    assert duck["rows"] and duck["rows"] == sparky["rows"]
