"""AppTest of the location page's Plan step: a charged pilot (recorded as its own run), the plan
read from `core.planning.location.plan_location` on that pilot, and the planned ε carried into
the release step."""

from __future__ import annotations

from core.planning.location import plan_location
from core.planning.shape import PilotShape
from core.registry import Registry
from ui.plan.location import ANSWER_KEY, PILOT_KEY

PAGE = "pages/location_histograms.py"


def _page(app_test):
    at = app_test(PAGE, timeout=180)
    at.run()
    at.select_slider(key="lh_grid").set_value(64)
    at.run()
    at.session_state["lh_plan_open"] = True
    at.run()
    assert not at.exception, at.exception
    return at


def test_plan_step_draws_a_recorded_pilot_and_plans_on_it(app_test, registry_dir):
    at = _page(app_test)
    assert any("Draw the pilot" in m.value and "uses ε 0.2" in m.value for m in at.markdown)
    at.button(key="lh_plan_pilot_run").click().run()
    assert not at.exception, at.exception
    kept = at.session_state[PILOT_KEY]
    pilot = kept.pilot
    assert pilot.shape == (64, 64) and pilot.epsilon == 0.2
    (record,) = [r for r in Registry().releases() if r.tool == "pilot"]
    assert record.id == pilot.release_id and record.params["via"] == "app"
    at.number_input(key="lh_plan_target").set_value(0.2)
    at.multiselect(key="lh_plan_methods").set_value(["auto", "ug"])
    at.run()
    at.button(key="lh_plan_run").click().run()
    assert not at.exception, at.exception
    shown = at.session_state[ANSWER_KEY].plan
    expected = plan_location(PilotShape(pilot), ["auto", "ug"], 0.2, unit=pilot.unit)
    assert [m.epsilon for m in shown.methods] == [m.epsilon for m in expected.methods]
    assert any(expected.describe() == s.value for s in at.success)
    (table,) = [d.value for d in at.dataframe if "planned ε" in d.value.columns]
    assert list(table["planned ε"]) == [m.epsilon for m in expected.methods]
    best = expected.best
    at.button(key=f"lh_plan_use_{best.method}").click().run()
    assert not at.exception, at.exception
    assert at.select_slider(key="lh_eps").value == best.epsilon
    assert at.multiselect(key="lh_methods").value == [best.method]
    assert any(f"uses ε {best.epsilon:.4g}" in m.value for m in at.markdown)  # Build's charge


def test_a_declared_shape_charges_nothing(app_test, registry_dir):
    at = _page(app_test)
    at.radio(key="lh_plan_basis").set_value(at.radio(key="lh_plan_basis").options[1]).run()
    at.button(key="lh_plan_run").click().run()
    assert not at.exception, at.exception
    assert at.session_state[ANSWER_KEY].plan.pilot_epsilon == 0.0
    assert Registry().releases() == []
