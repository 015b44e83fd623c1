"""AppTest of the HTF step-by-step view. On a demo dataset it is a classroom (issue 32): open from
the start, before any Build, seeded (the sidebar's seed, or the teaching seed in secure mode),
charging nothing; the depth slider redraws the depth on the grid and on the map; Play keeps
the pace its label states (one constant for both)."""

from __future__ import annotations

import json

import pytest

import ui.location.stepper
import ui.pace
from ui.location.stepper import PLAY_SECONDS, TEACHING_SEED

PAGE = "pages/location_histograms.py"


def _page(app_test, seed: int | None = None):
    at = app_test(PAGE, timeout=180)
    if seed is not None:  # the sidebar's demo switch (ui/noise.py) lives in app.py's sidebar
        at.session_state["dpx_demo_mode"] = True
        at.session_state["dpx_demo_seed"] = seed
    at.run()
    at.select_slider(key="lh_grid").set_value(64)
    at.multiselect(key="lh_methods").set_value(["ug"])
    at.run()
    assert not at.exception, at.exception
    return at


def _step_figure(at) -> dict:
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        if spec["layout"].get("title", {}).get("text", "").startswith("Depth "):
            return spec
    raise AssertionError("no stepper figure")


def _map_drawn(at) -> bool:
    """The stepper's folium map (a streamlit-folium component): the depth's areas, coloured by
    fate (the layer's style names), over the offline boundaries."""
    scripts = [json.loads(e.proto.json_args)["script"] for e in at.get("component_instance")]
    return any('"styleNames"' in s and "stopped: noisy count" in s for s in scripts)


def _text(at) -> str:
    return " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)


def test_a_demo_is_a_classroom_open_before_any_build_and_charging_nothing(app_test):
    at = _page(app_test)
    assert not any(b.key == "lh_step_build" for b in at.button)  # no button: built at once
    slider = at.slider(key="lh_step_level")
    assert slider.max >= 2
    assert slider.label == "Tree depth (0 = the whole area, before any cut)"
    text = _text(at)
    assert "Teaching view" in text and "charges no budget" in text
    assert f"seed {TEACHING_SEED}" in text  # secure mode: the teaching seed
    assert any("press **Build releases**" in i.value for i in at.info)  # nothing was built
    first = _step_figure(at)["layout"]["title"]["text"]
    slider.set_value(2).run()
    second = _step_figure(at)["layout"]["title"]["text"]
    assert first != second and second.startswith("Depth 2 of ") and "ε spent so far" in second
    names = [t.get("name") for t in _step_figure(at)["data"] if t.get("name")]
    assert "chosen split" in names and "candidate splits" in names
    assert _map_drawn(at)  # the same depth on the map, beside the grid
    at.run()  # an unrelated rerun keeps the expander open and the trace
    assert _step_figure(at)["layout"]["title"]["text"] == second


def _level_two(app_test, seed: int | None) -> dict:
    at = _page(app_test, seed)
    at.slider(key="lh_step_level").set_value(2).run()
    assert not at.exception, at.exception
    return _step_figure(at)


def test_the_same_seed_gives_every_student_the_same_steps(app_test):
    a = _level_two(app_test, 5)
    ui.location.stepper._classroom_trace.clear()  # the same steps from a fresh build, not a cache
    b, c = _level_two(app_test, 5), _level_two(app_test, 6)
    assert a["data"] == b["data"] and a["layout"]["title"] == b["layout"]["title"]
    assert a["data"] != c["data"]  # the steps do depend on the noise
    # secure mode on a demo: the teaching seed, the same for everyone
    assert _level_two(app_test, None)["data"] == _level_two(app_test, None)["data"]
    assert _level_two(app_test, None)["data"] == _level_two(app_test, TEACHING_SEED)["data"]


def test_a_classroom_trace_is_built_once_per_server_and_shared(app_test, monkeypatch):
    """Sixteen students opening the demo cost one traced build, not sixteen (issue 29: it was
    45 % of the server's CPU under load); the owner's own data still build per session."""
    ui.location.stepper._classroom_trace.clear()
    builds = []
    real = ui.location.stepper._build_trace
    monkeypatch.setattr(
        ui.location.stepper, "_build_trace", lambda *a: builds.append(1) or real(*a)
    )
    first = _level_two(app_test, 7)
    by_first = len(builds)  # the page's default grid, then the 64 x 64 one: each built once
    assert by_first >= 1
    second = _level_two(app_test, 7)
    assert first["data"] == second["data"]
    assert len(builds) == by_first  # the second student built nothing
    _level_two(app_test, 8)  # another seed: another classroom
    assert len(builds) > by_first


class FakeClock:
    """Play on a fake clock: every reading moves 0.25 s on (the time a run takes to draw)."""

    def __init__(self):
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        self.now += 0.25
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_clock(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(ui.pace, "_clock", clock.clock)
    monkeypatch.setattr(ui.pace, "_sleep", clock.sleep)
    return clock


def test_each_depth_in_plain_sentences_and_play_keeps_its_stated_pace(app_test, fake_clock):
    at = _page(app_test, seed=7)
    slider = at.slider(key="lh_step_level")
    main = next(m.value for m in at.markdown if m.value.startswith("**Depth 0 of"))
    assert "random noise" in main  # the sentences: plain words, no paper wording
    assert not [w for w in ("homogeneity", "Algorithm", "height") if w in main], main
    paper = next(e for e in at.expander if e.label.startswith("In the paper's words"))
    assert "discrete Laplace noise of scale" in " ".join(m.value for m in paper.markdown)
    last = int(slider.max)
    slider.set_value(last - 3).run()
    assert f"Depth {last - 3} of" in " ".join(m.value for m in at.markdown)
    toggle = at.toggle(key="lh_step_play")
    assert f"every {PLAY_SECONDS:g} s" in toggle.label  # the label reads the pace's constant
    toggle.set_value(True).run()  # plays to the last depth, then stops
    assert not at.exception, at.exception
    assert at.slider(key="lh_step_level").value == last
    assert at.toggle(key="lh_step_play").value is False
    # three steps, each due PLAY_SECONDS after the one before: the wait is what the drawing
    # left of the pace (the fake clock moves 0.25 s a reading), never the pace on top of it
    assert len(fake_clock.sleeps) == 3
    assert all(0 < s < PLAY_SECONDS for s in fake_clock.sleeps), fake_clock.sleeps


def test_next_due_keeps_the_pace_and_never_waits_when_behind():
    assert ui.pace.next_due(None, started=10.0, now=10.4, seconds=1.2) == pytest.approx(11.2)
    assert ui.pace.next_due(11.2, started=11.3, now=11.9, seconds=1.2) == pytest.approx(12.4)
    assert ui.pace.next_due(11.2, started=11.3, now=13.0, seconds=1.2) == 13.0  # slow: no wait
    assert ui.pace.play_label(PLAY_SECONDS, "depth") == (
        f"▶ Play (one depth every {PLAY_SECONDS:g} s; stops at the last depth)"
    )
