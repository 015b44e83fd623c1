"""The DP SQL page run on Spark (AppTest, the session's SparkSession): the same seed releases
the same rows as DuckDB."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.noise import MODE_KEY, SEED_KEY

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "dp_sql.py")


def _released(engine: str):
    at = AppTest.from_file(PAGE, default_timeout=900)
    at.session_state[MODE_KEY] = True
    at.session_state[SEED_KEY] = 7
    at.run()
    at.radio(key="dpsql_engine").set_value(engine).run()
    at.button(key="dpsql_run").click().run()
    assert not at.exception
    assert not [e for e in at.error if "Refused" in e.value or "Failed" in e.value]
    for element in at.dataframe:
        if {"dept", "c"} <= set(element.value.columns):
            return element.value
    raise AssertionError("no released table")


def test_page_spark_run_equals_duckdb(spark, registry_dir):
    duck = _released("DuckDB")
    sparky = _released("Spark")
    assert len(duck) > 0
    assert duck.to_dict("list") == sparky.to_dict("list")
