"""AppTest of the location page's Plan step: a charged pilot (recorded as its own run), the plan
read from `core.planning.location.plan_location` on that pilot, and the planned ε carried into
the release step."""

from __future__ import annotations

from core.planning.location import plan_location
from core.planning.shape import PilotShape
from core.registry import Registry
from ui.glossary import in_app
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
    assert any(in_app(expected.describe()) == s.value for s in at.success)  # ui.glossary
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


def _registered(app_test, registry_dir, tmp_path, monkeypatch, mode: str | None, budget: float):
    """Dataset 'visits' (400 points near Los Angeles) on the page, 64 x 64 grid, Plan open."""
    from core.registry import Policy
    from tests.registry.helpers import write_points

    if mode:
        monkeypatch.setenv("DPX_MODE", mode)
    else:
        monkeypatch.delenv("DPX_MODE", raising=False)
    reg = Registry(registry_dir)
    reg.add_dataset("visits", [("t", write_points(tmp_path / "v.csv"))], Policy(budget))
    at = app_test(PAGE, timeout=180)
    at.run()
    if any(r.key == "lh_source" and "Registered dataset" in r.options for r in at.radio):
        at.radio(key="lh_source").set_value("Registered dataset").run()
    region = next(w.key for w in at.selectbox if (w.key or "").startswith("lh_region_"))
    at.selectbox(key=region).set_value("custom").run()
    for i, v in enumerate([-118.5, 33.7, -117.9, 34.3]):
        key = next(w.key for w in at.number_input if (w.key or "").startswith(f"lh_bb{i}_"))
        at.number_input(key=key).set_value(v)
    at.select_slider(key="lh_grid").set_value(64)
    at.session_state["lh_plan_open"] = True
    at.run()
    assert not at.exception, at.exception
    return at, reg


def test_analyst_confirms_the_pilot_then_a_recorded_pilot_charges_nothing(
    app_test, registry_dir, tmp_path, monkeypatch
):
    at, reg = _registered(app_test, registry_dir, tmp_path, monkeypatch, "analyst", 0.6)
    assert at.button(key="lh_plan_pilot_run").disabled  # 0.2 > a quarter of 0.6: confirm first
    (box,) = [c for c in at.checkbox if (c.key or "").startswith("lh_plan_pilot_run::confirm")]
    box.check().run()
    at.button(key="lh_plan_pilot_run").click().run()
    assert not at.exception, at.exception
    assert reg.spent("visits")[0] == 0.2
    (pilot,) = [r for r in reg.releases("visits") if r.tool == "pilot"]
    assert pilot.params["role"] == "analyst" and pilot.params["via"] == "app"
    assert any(f"release #{pilot.id} of dataset **visits**" in m.value for m in at.markdown)
    # a recorded pilot: the same plan as the core planner on the record, nothing charged again
    basis = at.radio(key="lh_plan_basis")
    basis.set_value(basis.options[1]).run()
    at.button(key="lh_plan_run").click().run()
    assert not at.exception, at.exception
    from core.governance.planning import recorded_pilot

    recorded = recorded_pilot(reg, pilot.id, "visits")
    expected = plan_location(PilotShape(recorded), ["auto"], 0.1, unit=recorded.unit)
    assert at.session_state[ANSWER_KEY].plan == expected
    assert reg.spent("visits")[0] == 0.2
