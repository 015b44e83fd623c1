"""AppTest: the DP SQL page offers the engine choice (DuckDB / Spark) only when PySpark and
Java 17 are available (a real Spark run on the page: tests/spark/test_page_engine.py)."""

from __future__ import annotations

import pytest

import core.sparkutil as sparkutil
from ui.noise import MODE_KEY, SEED_KEY

PAGE = "pages/dp_sql.py"


def _page(app_test, monkeypatch, reason):
    monkeypatch.setattr(sparkutil, "spark_unavailable_reason", lambda: reason)
    at = app_test(PAGE)
    at.session_state[MODE_KEY] = True
    at.session_state[SEED_KEY] = 7
    return at.run()


def test_no_engine_choice_without_spark(app_test, registry_dir, monkeypatch):
    at = _page(app_test, monkeypatch, "no Java runtime found")
    assert not at.exception
    assert not [r for r in at.radio if r.key == "dpsql_engine"]
    at.button(key="dpsql_run").click().run()  # DuckDB runs as before
    assert not at.exception
    assert any({"dept", "c"} <= set(d.value.columns) for d in at.dataframe)


def test_engine_choice_offered_with_spark(app_test, registry_dir, monkeypatch):
    at = _page(app_test, monkeypatch, None)
    assert not at.exception
    radio = at.radio(key="dpsql_engine")
    assert list(radio.options) == ["DuckDB", "Spark"]
    assert radio.value == "DuckDB"  # the embedded engine stays the default


@pytest.mark.parametrize("reason", [None, "PySpark is not installed"])
def test_the_page_asks_core_not_its_own_check(app_test, registry_dir, monkeypatch, reason):
    at = _page(app_test, monkeypatch, reason)
    assert bool([r for r in at.radio if r.key == "dpsql_engine"]) == (reason is None)
