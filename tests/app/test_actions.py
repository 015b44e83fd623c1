"""Every heavy page action runs in the app's bounded action pool (issue 29): a location build,
its evaluation, a location pilot and plan, a PP plan and a PP publication each take exactly one
slot of `ui.actions.ACTIONS` while they compute, so N sessions pressing at once run at most
`slots` of them side by side. The pool is replaced by one that records what ran inside it."""

from __future__ import annotations

import pytest

import ui.actions
from core.pool import SlotPool


class RecordingPool(SlotPool):
    """A one-slot pool that counts the blocks it admitted and the most that ran at once."""

    def __init__(self):
        super().__init__(1)
        self.entered = 0

    def slot(self, on_wait=None):
        self.entered += 1
        return super().slot(on_wait)


@pytest.fixture
def pool(monkeypatch):
    recording = RecordingPool()
    monkeypatch.setattr(ui.actions, "ACTIONS", recording)
    return recording


def _pressed(at, key: str, pool: RecordingPool) -> None:
    before = pool.entered
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    assert pool.entered == before + 1, f"{key} did not run in the action pool"
    assert pool.state().running == 0 and pool.state().waiting == 0  # the slot was given back


def test_location_build_evaluate_pilot_and_plan_take_a_slot(app_test, registry_dir, pool):
    at = app_test("pages/location_histograms.py", timeout=180).run()
    at.select_slider(key="lh_grid").set_value(64)
    at.multiselect(key="lh_methods").set_value(["ug"]).run()
    _pressed(at, "lh_run", pool)
    at.number_input(key="lh_q").set_value(20)
    at.number_input(key="lh_reps").set_value(1).run()
    _pressed(at, "lh_eval", pool)
    at.session_state["lh_plan_open"] = True
    at.run()
    _pressed(at, "lh_plan_pilot_run", pool)
    at.multiselect(key="lh_plan_methods").set_value(["ug"]).run()
    _pressed(at, "lh_plan_run", pool)


def test_pp_plan_and_publish_take_a_slot(app_test, registry_dir, pool):
    at = app_test("pages/pp_balancing.py", timeout=120)
    at.session_state["dpx_demo_mode"] = True
    at.session_state["dpx_demo_seed"] = 7
    at.run()
    _pressed(at, "pp_publish", pool)
    at.session_state["pp_plan_open"] = True
    at.run()
    _pressed(at, "pp_plan_run", pool)
