"""AppTest of the PP balancing page: Figure 9 demo, the stepper, refusals and publishing."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from core.balancing.demos import FIGURE9_COUNTS
from core.balancing.names import SEEDED_MARKER
from core.balancing.plan import plan_partition
from core.balancing.report import INTERNAL_LABEL

PAGE = "pages/pp_balancing.py"


def chart(at, key: str) -> dict:
    for element in at.get("plotly_chart"):
        if element.proto.id and key in element.proto.id:
            return json.loads(element.proto.spec)
    raise AssertionError(f"no plotly chart with key {key}")


def shown_group(at) -> str:
    return next(m.value for m in at.markdown if re.match(r"\*\*g\d+\*\* = ", m.value))


def expected_group(j: int, group: dict[str, int]) -> str:
    return f"**g{j}** = {{{', '.join(f'{v}: {c}' for v, c in group.items())}}}"


def e6_trace():
    return plan_partition(FIGURE9_COUNTS, Fraction(1, 3), Fraction(2, 3)).phase1.trace


def test_renders_with_figure9_demo(app_test):
    at = app_test(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="pp_demo").value == "pp-figure9"
    assert [m.value for m in at.metric][3] == "3"  # beta
    assert shown_group(at).startswith(expected_group(1, e6_trace()[0].group))
    spec = chart(at, "pp_step_chart")
    assert spec["layout"]["title"]["text"].startswith("Iteration 1:")
    assert spec["data"][0]["y"][:3] == [6, 6, 6]  # the h slice of the top-beta bars
    assert any("φ(fβ) = 42/3 − max{12 − 6, 5} = 8 ≥ fβ = 6" in c.value for c in at.code)
    assert any("Invariant checks passed" in s.value for s in at.success)


def test_next_prev_last_follow_the_trace(app_test):
    trace = e6_trace()
    at = app_test(PAGE).run()
    at.button(key="pp_next").click().run()
    assert not at.exception
    assert shown_group(at).startswith(expected_group(2, trace[1].group))
    spec = chart(at, "pp_step_chart")
    assert spec["layout"]["title"]["text"].startswith("Iteration 2: T0 has 24 records")
    assert spec["data"][0]["x"][:3] == ["x1", "x4", "x5"]
    at.button(key="pp_next").click().run()
    assert shown_group(at).startswith(expected_group(3, trace[2].group))
    at.button(key="pp_prev").click().run()
    assert shown_group(at).startswith(expected_group(2, trace[1].group))
    at.button(key="pp_last").click().run()
    assert shown_group(at).startswith(expected_group(5, trace[4].group))
    assert any("T0 empty — done" in m.value for m in at.markdown)
    assert at.button(key="pp_next").disabled
    at.slider(key="pp_step").set_value(4).run()
    assert shown_group(at).startswith(expected_group(4, trace[3].group))
    at.button(key="pp_first").click().run()
    assert shown_group(at).startswith(expected_group(1, trace[0].group))


def test_publish_in_demo_mode(app_test):
    at = app_test(PAGE)
    at.session_state["dpx_demo_mode"] = True
    at.session_state["dpx_demo_seed"] = 7
    at.run()
    at.button(key="pp_publish").click().run()
    assert not at.exception
    spec = chart(at, "pp_publish_chart")
    names = [trace["name"] for trace in spec["data"]]
    assert names[0] == "original (evaluation only)" and "reconstructed" in names[2]
    assert spec["data"][0]["y"] == list(FIGURE9_COUNTS.values())
    assert any("evaluation only — uses the raw data" in c.value for c in at.caption)
    assert any("reproducible demo mode" in w.value for w in at.warning)
    published = at.dataframe[-1].value
    # the SA alone by default (issue 16): no other column, rows = the noisy plan's slots
    assert list(published.columns) == ["SA", "subtable"]
    assert any("Exact plan" in i.value for i in at.info)  # the stepper's plan, labelled
    (plan_table,) = [d.value for d in at.dataframe if "planned size (noisy)" in d.value.columns]
    assert len(published) == plan_table["planned size (noisy)"].sum()


def test_refused_partition_blocks_publish(app_test):
    at = app_test(PAGE).run()
    at.text_input(key="pp_rho1_demo:pp-figure9").set_value("3/10")
    at.text_input(key="pp_rho2_demo:pp-figure9").set_value("8/25").run()
    assert not at.exception
    assert any("refused" in e.value for e in at.error)
    assert not [b for b in at.button if b.key == "pp_publish"]
    at.checkbox(key="pp_accept_fallback").check().run()
    assert [b for b in at.button if b.key == "pp_publish"]


def test_bad_rho_shows_a_clear_error(app_test):
    at = app_test(PAGE).run()
    at.text_input(key="pp_rho1_demo:pp-figure9").set_value("2/3")
    at.text_input(key="pp_rho2_demo:pp-figure9").set_value("1/3").run()
    assert not at.exception
    assert any("must be smaller" in e.value for e in at.error)


def test_patient_demo_shows_t2_distribution(app_test):
    at = app_test(PAGE).run()
    at.selectbox(key="pp_demo").set_value("pp-synthetic-patients").run()
    assert not at.exception
    assert any("Distributing T''" in s.value for s in at.subheader)
    assert any("Hypertension" in m.value for m in at.markdown)


def test_nothing_to_protect_needs_confirmation(app_test):
    at = app_test(PAGE).run()
    demos = at.selectbox(key="pp_demo").options
    if not any("pp-palmer-penguins" in o for o in demos):
        pytest.skip("palmerpenguins is not installed")
    at.selectbox(key="pp_demo").set_value("pp-palmer-penguins").run()
    at.text_input(key="pp_rho1_demo:pp-palmer-penguins").set_value("0.15")
    at.text_input(key="pp_rho2_demo:pp-palmer-penguins").set_value("0.5").run()
    assert not at.exception
    # one clear message, not "Phase 1 balances T' (0 records) ..." followed by "PP does not run"
    messages = [m.value for m in [*at.info, *at.warning, *at.error]]
    assert [m for m in messages if "PP does not run" in m] == messages[-1:]
    assert not any("Phase 1 balances" in m or "0 records" in m for m in messages)
    assert not [b for b in at.button if b.key == "pp_publish"]


def test_play_advances_to_the_last_step_and_stops(app_test):
    trace = e6_trace()
    at = app_test(PAGE).run()
    at.slider(key="pp_step").set_value(4).run()
    at.toggle(key="pp_play").set_value(True).run()
    assert not at.exception
    assert shown_group(at).startswith(expected_group(5, trace[4].group))
    assert at.toggle(key="pp_play").value is False  # Play turns itself off at the last step


# -- work survives navigation; stale publications are labelled or cleared ---------------------
@pytest.fixture
def shell(app_test):
    """The whole app (app.py's navigation) on the PP page, in reproducible demo mode."""
    at = app_test("app.py")
    at.session_state["dpx_demo_mode"] = True
    at.run()
    return at.switch_page(PAGE).run()


def test_inputs_and_publication_survive_navigating_home_and_back(shell):
    at = shell
    at.selectbox(key="pp_demo").set_value("pp-synthetic-patients").run()
    sa = at.selectbox(key="pp_sa_demo:pp-synthetic-patients").value
    at.text_input(key="pp_rho1_demo:pp-synthetic-patients").set_value("1/5").run()
    at.button(key="pp_publish").click().run()
    assert not at.exception
    published = at.dataframe[-1].value
    at.switch_page("pages/home.py").run()
    assert at.title[0].value == "DP Explorer"
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="pp_demo").value == "pp-synthetic-patients"
    assert at.selectbox(key="pp_sa_demo:pp-synthetic-patients").value == sa
    assert at.text_input(key="pp_rho1_demo:pp-synthetic-patients").value == "1/5"
    assert at.dataframe[-1].value.equals(published)
    assert not any("Earlier publication" in w.value for w in at.warning)


def test_publication_with_other_settings_is_labelled_and_a_new_plan_clears_it(shell):
    at = shell
    at.button(key="pp_publish").click().run()
    at.multiselect(key="pp_keep_demo:pp-figure9").set_value(["record"]).run()  # publish it
    earlier = [w.value for w in at.warning if "Earlier publication" in w.value]
    assert len(earlier) == 1
    assert "(columns: SA → record, SA)" in earlier[0]  # names what changed, nothing else
    at.button(key="pp_publish").click().run()
    assert not any("Earlier publication" in w.value for w in at.warning)
    assert "record" in at.dataframe[-1].value.columns
    at.text_input(key="pp_rho2_demo:pp-figure9").set_value("3/4").run()  # another plan
    assert not any("pp_publish_chart" in (c.proto.id or "") for c in at.get("plotly_chart"))


def test_downloads_label_the_release_the_seed_and_the_internal_report(shell):
    at = shell
    at.button(key="pp_publish").click().run()
    labels = {d.proto.label for d in at.get("download_button")}
    assert labels == {"Published CSV", "Sub-table metadata", "Run report (INTERNAL)"}
    captions = [c.value for c in at.caption]
    assert any(SEEDED_MARKER in c for c in captions)
    assert INTERNAL_LABEL in captions
    assert any("seeded noise" in w.value for w in at.warning)


def test_a_continuous_sensitive_attribute_is_refused_before_anything(app_test):
    """Issue 18: a table with only latitude/longitude made PP balance 200,000 raw longitudes
    (4.6 MB of page text). The column is refused in one line, and no raw value is listed."""
    rng = np.random.default_rng(3)
    points = pd.DataFrame(
        {
            "latitude": rng.uniform(44.9, 45.05, 20_000),
            "longitude": rng.uniform(-93.33, -93.2, 20_000),
        }
    )
    at = app_test(PAGE)
    at.session_state["pp_upload::files"] = [("points.csv", points.to_csv(index=False).encode())]
    at.run()
    at.radio(key="pp_source").set_value("Upload CSV/Parquet").run()
    assert not at.exception
    (error,) = at.error
    assert "'longitude' looks continuous" in error.value and "\n" not in error.value
    assert not at.get("plotly_chart") and not at.dataframe and not at.metric
    texts = "".join(str(e.proto) for e in at.main if getattr(e, "proto", None) is not None)
    assert "looks continuous" in texts  # the check reads the page
    assert f"{points.longitude[0]:.4f}"[:8] not in texts and len(texts) < 20_000
