"""AppTest of the location page's tuning view (owner only, evaluation only) and its keyed
expanders (they stay open across reruns; their content runs only when open)."""

from __future__ import annotations

import json

PAGE = "pages/location_histograms.py"


def _built(app_test):
    at = app_test(PAGE, timeout=180)
    at.run()
    at.select_slider(key="lh_grid").set_value(64)
    at.multiselect(key="lh_methods").set_value(["ug", "privtree"])
    at.run()
    at.button(key="lh_run").click().run()
    assert not at.exception, at.exception
    return at


def _tuning_chart(at) -> dict:
    for el in at.get("plotly_chart"):
        spec = json.loads(el.proto.spec)
        if "MRE against ε" in spec["layout"].get("title", {}).get("text", ""):
            return spec
    raise AssertionError("no tuning chart")


def test_tuning_view_draws_curves_with_error_bars_and_reads_the_target(app_test):
    at = _built(app_test)
    assert not any(w.key == "lh_tune_run" for w in at.button)  # closed: nothing runs
    at.session_state["lh_tune_open"] = True
    at.run()
    assert any("uses the raw data" in w.value for w in at.warning)
    at.number_input(key="lh_tune_k").set_value(6)
    at.number_input(key="lh_tune_q").set_value(50)
    at.number_input(key="lh_tune_reps").set_value(2)
    at.number_input(key="lh_tune_target").set_value(0.5)
    at.run()
    at.button(key="lh_tune_run").click().run()
    assert not at.exception, at.exception
    spec = _tuning_chart(at)
    assert spec["layout"]["xaxis"]["type"] == "log"
    assert {t["name"] for t in spec["data"]} == {"UG", "PrivTree"}
    for t in spec["data"]:
        assert len(t["x"]) == 6 and t["error_y"]["visible"] and len(t["error_y"]["array"]) == 6
    table = at.dataframe[-1].value
    assert list(table["method"]) == ["UG", "PrivTree"]
    assert "smallest ε with MRE ≤ 0.5" in table.columns
    # the curves stay after an unrelated rerun (the keyed expander stays open)
    at.run()
    _tuning_chart(at)


def test_tuning_view_is_refused_in_analyst_mode(monkeypatch):
    """ui/location/tuning.show_tuning fails closed when DPX_MODE=analyst, whatever page calls it."""
    import numpy as np
    from streamlit.testing.v1 import AppTest

    def script():
        import numpy as np
        import streamlit as st

        from core.privacy import Noise
        from core.spatial.grid import Grid
        from core.spatial.service import HTFOptions
        from ui.location.params import Columns
        from ui.location.request import LocationBuildRequest
        from ui.location.tuning import show_tuning

        bbox = (0.0, 0.0, 1.0, 1.0)
        request = LocationBuildRequest.of(
            1.0, HTFOptions(), ["ug"], Columns("lat", "lon", 8), bbox, False, Grid(8, 8, bbox),
            "demo", Noise.seeded(1),
        )  # fmt: skip
        show_tuning(np.ones((8, 8), dtype=np.int64), request, Noise.seeded(1))
        st.write("end")

    monkeypatch.setenv("DPX_MODE", "analyst")
    at = AppTest.from_function(script, default_timeout=60).run()
    assert not at.exception, at.exception
    assert any("data owner only" in i.value for i in at.info)
    assert not at.button and not at.warning and not at.number_input
    monkeypatch.setenv("DPX_MODE", "owner")
    at = AppTest.from_function(script, default_timeout=60).run()
    assert any(b.key == "lh_tune_run" for b in at.button)
    del np
