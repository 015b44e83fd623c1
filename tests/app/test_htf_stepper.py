"""AppTest of the HTF step-by-step expander: keyed (stays open across reruns), runs only when
open, the level slider redraws the level, and demo mode reproduces the same steps."""

from __future__ import annotations

import json

PAGE = "pages/location_histograms.py"


def _stepper(app_test, seed: int | None = None):
    at = app_test(PAGE, timeout=180)
    if seed is not None:  # the sidebar's demo switch (ui/noise.py) lives in app.py's sidebar
        at.session_state["dpx_demo_mode"] = True
        at.session_state["dpx_demo_seed"] = seed
    at.run()
    at.select_slider(key="lh_grid").set_value(64)
    at.multiselect(key="lh_methods").set_value(["ug"])
    at.run()
    at.button(key="lh_run").click().run()
    assert not at.exception, at.exception
    return at


def _step_figure(at) -> dict:
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        if spec["layout"].get("title", {}).get("text", "").startswith("Height "):
            return spec
    raise AssertionError("no stepper figure")


def test_stepper_runs_only_when_open_and_the_slider_moves(app_test):
    at = _stepper(app_test)
    assert not any(b.key == "lh_step_build" for b in at.button)  # closed: nothing built
    at.session_state["lh_step_open"] = True
    at.run()
    at.button(key="lh_step_build").click().run()
    assert not at.exception, at.exception
    slider = at.slider(key="lh_step_level")
    assert slider.max >= 2
    first = _step_figure(at)["layout"]["title"]["text"]
    slider.set_value(2).run()
    second = _step_figure(at)["layout"]["title"]["text"]
    assert first != second and "ε spent so far" in second
    names = [t.get("name") for t in _step_figure(at)["data"] if t.get("name")]
    assert "chosen split" in names and "candidate splits" in names
    at.run()  # an unrelated rerun keeps the expander open and the trace
    assert _step_figure(at)["layout"]["title"]["text"] == second


def _level_two(app_test, seed: int) -> dict:
    at = _stepper(app_test, seed)
    at.session_state["lh_step_open"] = True
    at.run()
    at.button(key="lh_step_build").click().run()
    at.slider(key="lh_step_level").set_value(2).run()
    assert not at.exception, at.exception
    return _step_figure(at)


def test_demo_mode_reproduces_the_steps_and_another_seed_does_not(app_test):
    a, b, c = _level_two(app_test, 5), _level_two(app_test, 5), _level_two(app_test, 6)
    assert a["data"] == b["data"] and a["layout"]["title"] == b["layout"]["title"]
    assert a["data"] != c["data"]  # the steps do depend on the noise


def test_each_depth_is_explained_in_sentences_and_play_advances(app_test):
    at = _stepper(app_test, seed=7)
    at.session_state["lh_step_open"] = True
    at.run()
    at.button(key="lh_step_build").click().run()
    slider = at.slider(key="lh_step_level")
    assert slider.label.startswith("Tree depth (0 = the root")
    text = " ".join(m.value for m in at.markdown)
    assert "Depth 0 of" in text and "discrete Laplace noise of scale" in text
    assert "so it splits" in text or "so it stops" in text  # node by node, with the numbers
    last = int(slider.max)
    slider.set_value(last - 1).run()
    assert f"Depth {last - 1} of" in " ".join(m.value for m in at.markdown)
    at.toggle(key="lh_step_play").set_value(True).run()  # plays to the last depth, then stops
    assert not at.exception, at.exception
    assert at.slider(key="lh_step_level").value == last
    assert f"Depth {last} of" in " ".join(m.value for m in at.markdown)
