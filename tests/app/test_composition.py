"""AppTest of composition made visible on the Releases page (issue 33.5): a dataset's
cumulative ε at its δ under basic and pld, release by release (chart + table), for owner and
analyst; and the teaching view of how many releases a budget buys."""

from __future__ import annotations

import json

import pytest

from core.privacy import Laplace, NoisyThreshold
from core.privacy.accounting import Accounting
from core.registry import Policy, Registry

PAGE = "pages/releases.py"


@pytest.fixture
def sales(registry_dir, tmp_path) -> Registry:
    """Dataset 'sales' (pld, budget (10, 1e-6)) with five releases, one with a threshold."""
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    reg = Registry(registry_dir)
    reg.add_dataset("sales", [("t", table)], Policy(10.0, 1e-6), accounting="pld")
    for i in range(5):
        mechanisms = [Laplace("sum", sensitivity=1.0, epsilon=0.5)] * 2
        if i == 2:
            mechanisms.append(
                NoisyThreshold("keys", sensitivity=1.0, epsilon=0.1, delta=1e-8, threshold=20)
            )
        reg.charge("sql", "sales", {"q": i}, mechanisms, "secure")
    return reg


def _chart(at) -> dict:
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        if "Cumulative ε" in spec["layout"].get("title", {}).get("text", ""):
            return spec
    raise AssertionError("no composition chart")


@pytest.mark.parametrize("mode", ["owner", "analyst"])
def test_releases_page_shows_cumulative_epsilon_both_ways(app_test, sales, monkeypatch, mode):
    monkeypatch.setenv("DPX_MODE", mode)
    at = app_test(PAGE).run()
    assert not at.exception, at.exception
    basic = sales.composition("sales", Accounting.BASIC)
    tight = sales.composition("sales", Accounting.PLD)
    assert tight.epsilon < basic.epsilon == pytest.approx(5.1)
    line = next(c.value for c in at.caption if c.value.startswith("Composed over"))
    assert f"basic ε {basic.epsilon:.4g}" in line and f"pld ε {tight.epsilon:.4g}" in line
    labels = [e.label for e in at.expander]
    assert "Composition release by release · sales" in labels
    assert not any("Cumulative" in (e.proto.spec or "") for e in at.get("plotly_chart"))
    at.session_state["rel_comp_sales_open"] = True
    at.run()
    assert not at.exception, at.exception
    spec = _chart(at)
    basic_trace, pld_trace = spec["data"]
    assert basic_trace["x"] == [1, 2, 3, 4, 5] and pld_trace["x"] == [1, 2, 3, 4, 5]
    assert basic_trace["y"][-1] == pytest.approx(basic.epsilon)
    assert pld_trace["y"][-1] == pytest.approx(tight.epsilon)
    assert all(p <= b for p, b in zip(pld_trace["y"], basic_trace["y"], strict=True))
    table = next(d.value for d in at.dataframe if "releases" in d.value.columns)
    assert list(table["releases"]) == [1, 2, 3, 4, 5]
    assert list(table["last release"]) == [f"#{r.id}" for r in sales.charged_releases("sales")]
    assert table["ε basic (sum)"].iloc[-1] == pytest.approx(basic.epsilon)


def test_teaching_view_counts_releases_a_budget_buys(app_test, sales, monkeypatch):
    monkeypatch.delenv("DPX_MODE", raising=False)
    at = app_test(PAGE).run()
    assert not at.exception
    assert "How many releases does a budget buy? (teaching)" in [e.label for e in at.expander]
    at.session_state["rel_buy_open"] = True
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric if m.label.startswith("releases ·")}
    # Laplace ε 0.1 per release, budget (10, 1e-6): basic 100, pld more
    assert metrics["releases · basic"] == "100"
    assert int(metrics["releases · pld"].replace(",", "")) > 150
    at.number_input(key="rel_buy_total_eps").set_value(1.0).run()
    metrics = {m.label: m.value for m in at.metric if m.label.startswith("releases ·")}
    assert metrics["releases · basic"] == "10"
