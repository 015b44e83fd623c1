"""AppTest of state a person can trust (issue 18.2): a reload (a new Streamlit session opened on
the same URL, whose token names the session) brings back what the session built; navigating
away and back keeps the DP SQL refusal, the active tab and the tuning answer; budget lines show
the spend after a charge; runs a session charged but never showed are listed as "charged, not
shown" on the tool page and on the Releases page."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.balancing.demos import DEMOS as PP_DEMOS
from core.balancing.demos import PATIENTS_NAME
from core.privacy import Cost
from core.registry import Policy, Registry
from tests.app.conftest import register_staff
from tests.registry.helpers import write_points
from ui.noise import MODE_KEY, SEED_KEY
from ui.state import TOKEN_PARAM

LOCATION = "pages/location_histograms.py"
PP = "pages/pp_balancing.py"
SQL = "pages/dp_sql.py"


def reload(app_test, at, page: str):
    """What F5 does: a new session on the same URL (its `?s=` token)."""
    fresh = app_test(page)
    fresh.query_params[TOKEN_PARAM] = at.query_params[TOKEN_PARAM]
    return fresh.run()


def session_id(at) -> str:
    return at.session_state["_dpx_session"][1]


def fast_location(at, methods=("ug",)):
    at.select_slider(key="lh_grid").set_value(64)
    at.multiselect(key="lh_methods").set_value(list(methods)).run()
    return at


def test_reload_keeps_the_builds_evaluation_and_inputs(app_test, registry_dir):
    at = fast_location(app_test(LOCATION).run())
    at.button(key="lh_run").click().run()
    at.number_input(key="lh_q").set_value(50)
    at.number_input(key="lh_reps").set_value(1).run()
    at.button(key="lh_eval").click().run()
    assert not at.exception
    runs = len(Registry(registry_dir).releases())
    back = reload(app_test, at, LOCATION)
    assert not back.exception
    assert back.select_slider(key="lh_grid").value == 64  # inputs
    assert back.multiselect(key="lh_methods").value == ["ug"]
    # the map of the kept build (not the demo's HTF stepper map), not "press Build"
    maps = [json.loads(c.proto.json_args)["script"] for c in back.get("component_instance")]
    assert any('"styleNames"' not in m for m in maps)
    assert not any("press **Build releases**" in i.value for i in back.info)
    assert any("lh_mre" in (c.proto.id or "") for c in back.get("plotly_chart"))  # evaluation
    assert len(Registry(registry_dir).releases()) == runs  # nothing was built again


def test_reload_keeps_an_upload(app_test, registry_dir):
    table = next(d for d in PP_DEMOS if d.name == PATIENTS_NAME).load().head(500)
    at = app_test(PP).run()
    at.radio(key="pp_source").set_value("Upload CSV/Parquet").run()
    at.file_uploader(key="pp_upload").set_value(
        ("patients.csv", table.to_csv(index=False).encode(), "text/csv")
    ).run()
    assert not at.exception and at.metric
    at.run()  # the shadows of the last run are written at the start of the next one
    back = reload(app_test, at, PP)
    assert not back.exception
    assert any("uploaded earlier" in c.value and "patients.csv" in c.value for c in back.caption)
    assert [m.value for m in back.metric][0] == "500"  # the same table, planned again


def test_reload_says_plainly_what_is_no_longer_kept(app_test, registry_dir):
    at = app_test(PP)
    at.query_params[TOKEN_PARAM] = "x" * 32  # a link whose session is not (or no longer) kept
    at.run()
    assert any("no longer kept" in w.value for w in at.warning)


@pytest.fixture
def staff(registry_dir, tmp_path, monkeypatch) -> Registry:
    """Dataset 'staff' (the employee/orders demo tables): total ε 2.5, δ 1e-4."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    return register_staff(registry_dir, tmp_path, Policy(2.5, 1e-4))


def test_reload_keeps_the_active_tab_the_query_and_the_result(app_test, staff):
    at = app_test(SQL).run()
    query = at.text_area(key="dpsql_query").value.replace("epsilon = 1", "epsilon = 0.5")
    at.text_area(key="dpsql_query").set_value(query).run()
    at.button(key="dpsql_run").click().run()
    at.session_state["dpsql_tab"] = "Ledger"
    at.run()
    at.run()
    back = reload(app_test, at, SQL)
    assert back.session_state["dpsql_tab"] == "Ledger"
    assert back.text_area(key="dpsql_query").value == query
    assert "Partitions released" in {m.label for m in back.metric}  # the kept result


def test_navigation_keeps_the_refusal_and_the_active_tab(app_test, staff):
    at = app_test("app.py")
    at.session_state[MODE_KEY] = True  # seeded noise is refused on a non-teaching dataset
    at.session_state[SEED_KEY] = 3
    at.run()
    at.switch_page(SQL).run()
    at.radio(key="dpsql_source").set_value("Registered dataset").run()
    at.session_state["dpsql_tab"] = "Run"
    at.run()
    at.button(key="dpsql_run").click().run()
    refusal = [e.value for e in at.error if e.value.startswith("Refused")]
    assert refusal and "seeded" in refusal[0]
    at.switch_page("pages/home.py").run()
    at.switch_page(SQL).run()
    assert [e.value for e in at.error if e.value.startswith("Refused")] == refusal
    assert at.session_state["dpsql_tab"] == "Run"


def test_budget_line_shows_the_spend_right_after_the_charge(app_test, staff):
    at = app_test(SQL).run()
    at.radio(key="dpsql_source").set_value("Registered dataset").run()
    assert any("ε spent 0 of 2.5" in c.value for c in at.caption)
    at.button(key="dpsql_run").click().run()
    assert staff.spent("staff")[0] == pytest.approx(1.0)
    lines = [c.value for c in at.caption if "Budget of dataset" in c.value]
    assert lines and all("ε spent 1 of 2.5" in line for line in lines)


def test_tuning_choice_and_answer_survive_a_trip_home(app_test, registry_dir):
    at = app_test("app.py").run()
    at.switch_page(LOCATION).run()
    fast_location(at, methods=("ug", "privtree", "quadtree"))
    at.button(key="lh_run").click().run()
    at.session_state["lh_tune_open"] = True
    at.run()
    at.multiselect(key="lh_tune_methods").set_value(["ug"])
    at.number_input(key="lh_tune_k").set_value(6)
    at.number_input(key="lh_tune_reps").set_value(2)
    at.number_input(key="lh_tune_q").set_value(50).run()
    at.button(key="lh_tune_run").click().run()
    assert not at.exception
    answer = [d.value for d in at.dataframe if "how it was read" in d.value.columns]
    assert answer
    at.switch_page("pages/home.py").run()
    at.switch_page(LOCATION).run()
    assert at.multiselect(key="lh_tune_methods").value == ["ug"]
    again = [d.value for d in at.dataframe if "how it was read" in d.value.columns]
    assert again and again[0].equals(answer[0])
    assert not any("other settings" in w.value for w in at.warning)


def test_charged_but_never_shown_is_listed_on_the_page_and_on_releases(
    app_test, registry_dir, tmp_path
):
    reg = Registry(registry_dir)
    reg.add_dataset("visits", [("t", write_points(tmp_path / "v.csv"))], Policy(4.0))
    at = app_test(LOCATION).run()
    at.radio(key="lh_source").set_value("Registered dataset").run()
    # what a server killed during a build leaves: a charge with this session's id, never shown
    lost = reg.charge(
        "location", "visits", {"method": "ug", "session": session_id(at)}, Cost(0.5), "secure"
    )
    at.run()  # the shadows of the last run are written at the start of the next one
    at = reload(app_test, at, LOCATION)  # the server restarted; the person reloads
    boxes = [e.value for e in at.error if "Charged, not shown" in e.value]
    assert boxes and "ε 0.5" in boxes[0]
    table = next(d.value for d in at.dataframe if "status" in d.value.columns)
    assert table["id"].tolist() == [lost.id]
    releases = reload(app_test, at, "pages/releases.py")
    assert any("Charged, not shown" in s.value for s in releases.subheader)
    shown = next(d.value for d in releases.dataframe if "what" in d.value.columns)
    assert lost.id in shown["id"].tolist()
    at.button(key="lh_not_shown_ack").click().run()  # "I have seen these"
    assert not any("Charged, not shown" in e.value for e in at.error)


def test_a_session_token_never_reaches_a_release_record(app_test, registry_dir):
    at = fast_location(app_test(LOCATION).run())
    at.button(key="lh_run").click().run()
    (run,) = Registry(registry_dir).releases()
    token = at.query_params[TOKEN_PARAM]
    assert run.params["session"] == session_id(at) and token not in str(run.params)
    assert pd.notna(run.params["session"])


def _seed_box_script():
    import streamlit as st

    from ui.noise import seed_input

    if st.session_state.get("demo", True):  # demo mode on: the box is drawn
        seed_input()


def test_the_seed_survives_the_box_being_hidden_and_shown_again():
    """The seed is the session's value, not the seed box's: hiding the box (demo mode off) and
    showing it again brings back the seed typed, never the box's minimum (0)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_seed_box_script).run()
    assert at.number_input[0].value == 42 and at.session_state[SEED_KEY] == 42
    at.number_input[0].set_value(7).run()
    assert at.session_state[SEED_KEY] == 7
    for _ in range(3):
        at.session_state["demo"] = False
        at.run()
        assert not at.number_input
        at.session_state["demo"] = True
        at.run()
        assert at.number_input[0].value == 7 and at.session_state[SEED_KEY] == 7
    at.number_input[0].set_value(0).run()  # the minimum, typed: kept as typed
    at.run()
    assert at.number_input[0].value == 0 and at.session_state[SEED_KEY] == 0
