"""AppTest of the Releases page: budgets, the release list, filters, the report of the chosen release (a failing one isolated),
and analyst mode listing only releases of registered datasets."""

from __future__ import annotations

import pytest

from core.registry import Mechanism, Policy, Registry

PAGE = "pages/releases.py"


@pytest.fixture
def filled(registry_dir, tmp_path) -> Registry:
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    reg = Registry(registry_dir)
    reg.add_dataset("sales", [("t", table)], Policy(4.0, 1e-5))
    reg.add_dataset("visits", [("t", table)], Policy(2.0))
    for ds, tool, eps in (("sales", "sql", 1.0), ("sales", "htf", 0.5), ("visits", "htf", 2.0)):
        rel = reg.charge(tool, ds, {"p": 1}, [Mechanism("laplace", eps)], "secure")
        reg.attach(rel.id, {"columns": [], "rows": [], "ci95": {}, "leaves": [], "grid": {}})
    reg.charge("sql", None, {"p": 2}, [Mechanism("laplace", 9.0)], "secure")  # unregistered
    return reg


def _release_table(at):
    return next(d.value for d in at.dataframe if "id" in d.value.columns)


def _progress_texts(at) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


def test_budgets_list_and_reports(app_test, filled, monkeypatch):
    monkeypatch.delenv("DPX_MODE", raising=False)
    at = app_test(PAGE).run()
    assert not at.exception
    assert _progress_texts(at) == [
        "ε spent 1.5 of 4 (remaining 2.5)",
        "δ spent 0 of 1e-05 (remaining 1e-05)",
        "ε spent 2 of 2 (remaining 0)",
        "δ: total 0 — releases that need δ are refused",
    ]
    table = _release_table(at)
    assert list(table["id"]) == [1, 2, 3, 4] and list(table["ε"]) == [1.0, 0.5, 2.0, 9.0]
    assert any(e.label.endswith("0 changes, 0 refusals") for e in at.expander)
    # one picker (latest first), one report: the chosen release's
    assert at.selectbox(key="rel_report").options[0].startswith("#4 · sql · (unregistered)")
    assert len(at.selectbox(key="rel_report").options) == 4
    assert [b.proto.label for b in at.get("download_button")] == ["Report of release #4"]
    # the tool filter narrows both the table and the report picker
    at.multiselect(key="rel_tools").set_value(["htf"]).run()
    assert list(_release_table(at)["id"]) == [2, 3]
    assert [o.split(" · ")[0] for o in at.selectbox(key="rel_report").options] == ["#3", "#2"]
    assert [b.proto.label for b in at.get("download_button")] == ["Report of release #3"]


def test_budget_bars_show_delta_spent_as_well_as_epsilon(app_test, filled, monkeypatch):
    """Issue 28.3: after a release that spends the whole δ, the dataset's bars say so (a bar per
    parameter of (ε, δ)), though most of its ε remains."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    filled.charge("sql", "sales", {"p": 3}, [Mechanism("threshold", 0.25, 1e-5)], "secure")
    at = app_test(PAGE).run()
    assert not at.exception
    bars = {p.proto.text: p.proto.value for p in at.get("progress")}
    assert bars["ε spent 1.75 of 4 (remaining 2.25)"] == 43  # percent
    assert bars["δ spent 1e-05 of 1e-05 (remaining 0)"] == 100
    assert [m.value for m in at.metric if m.label == "δ remaining · sales"] == ["0"]


def test_a_failing_report_is_isolated_and_reports_are_built_on_demand(
    app_test, filled, monkeypatch
):
    """One release whose report cannot be built shows one line (not the exception's text,
    which could quote recorded values) and the page goes on; only the chosen release's report
    is built on a run, not one per listed release."""
    import core.reports as reports

    monkeypatch.delenv("DPX_MODE", raising=False)
    real, built = reports.report_html, []

    def flaky(registry, release_id):
        built.append(release_id)
        if release_id == 3:
            raise ValueError("SECRET-ROW-VALUE 34.0123")
        return real(registry, release_id)

    monkeypatch.setattr(reports, "report_html", flaky)
    at = app_test(PAGE).run()
    assert not at.exception and built == [4]  # the latest only, not all four
    at.selectbox(key="rel_report").set_value(3).run()
    assert not at.exception
    (error,) = at.error
    assert "release #3 could not be built" in error.value and "SECRET" not in error.value
    assert all("SECRET" not in m.value for m in [*at.markdown, *at.caption, *at.error])
    assert not at.get("download_button")
    assert list(_release_table(at)["id"]) == [1, 2, 3, 4]  # the rest of the page is there
    assert len(_progress_texts(at)) == 4  # ε and δ of each dataset
    at.selectbox(key="rel_report").set_value(2).run()
    assert not at.exception and not at.error
    assert [b.proto.label for b in at.get("download_button")] == ["Report of release #2"]
    assert built == [4, 3, 2]


def test_analyst_mode_lists_only_registered_releases(app_test, filled, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test(PAGE).run()
    assert not at.exception
    assert list(_release_table(at)["id"]) == [1, 2, 3]
    assert "(unregistered)" not in list(_release_table(at)["dataset"])
    # no owner history in analyst mode; the budget plans are for everyone (saving: owner only)
    # (and each dataset's composition, and the teaching view: public facts only)
    assert [e.label for e in at.expander] == [
        "Composition release by release · sales",
        "Budget plan · sales",
        "Composition release by release · visits",
        "Budget plan · visits",
        "How many releases does a budget buy? (teaching)",
    ]


def test_empty_registry_says_how_to_register(app_test, registry_dir):
    at = app_test(PAGE).run()
    assert not at.exception
    assert any("dpx dataset add" in i.value for i in at.info)


def test_app_role_is_the_cli_variable_and_fails_closed(monkeypatch):
    from core.governance import Role
    from ui.shell import role

    for value, expected in (("", Role.OWNER), ("owner", Role.OWNER), ("ANALYST", Role.ANALYST)):
        monkeypatch.setenv("DPX_MODE", value)
        assert role() is expected
    monkeypatch.setenv("DPX_MODE", "typo")
    assert role() is Role.ANALYST


def _chooser_script():
    import streamlit as st

    from ui.data import DemoKind, choose_data
    from ui.outcomes import user_errors

    with user_errors():
        choice = choose_data("t", DemoKind.SQL)
    st.write("picked:", choice.dataset_name)


def test_registered_dataset_chooser_shows_budget(filled):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_chooser_script).run()
    at.radio(key="t_source").set_value("Registered dataset").run()
    assert not at.exception
    assert at.selectbox(key="t_dataset").options == ["sales", "visits"]
    assert any("ε spent 1.5 of 4" in c.value for c in at.caption)
    at.selectbox(key="t_dataset").set_value("visits").run()
    assert any("ε spent 2 of 2" in c.value for c in at.caption)


def test_registered_dataset_chooser_without_datasets(registry_dir):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_chooser_script).run()
    at.radio(key="t_source").set_value("Registered dataset").run()
    assert not at.exception and any("dpx dataset add" in i.value for i in at.info)
