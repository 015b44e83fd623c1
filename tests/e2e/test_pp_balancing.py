"""The PP balancing page in a real browser: step through Example 6 (Figure 9 demo), then use the
page the way a class does — publish, change a widget, click every download, toggle demo mode,
navigate away and back, reload, a second browser, bad uploads — never an exception on screen,
the publication still there (or labelled as an earlier one). No request leaves localhost."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    bad_upload_cases,
    in_one_screen,
    toolbar_over_titles,
    two_sessions,
    upload_bad_file,
)
from tests.e2e.waiting import wait_idle as _wait_idle
from ui.pp.teaching import PLAY_SECONDS

pytestmark = pytest.mark.browser

SCREENSHOT = "pp_balancing.png"  # written by the `screenshot` fixture (temp dir)
PUBLISH = "Publish (perturb)"
EARLIER = "Earlier publication"
SEEDED_MARKER = "SEEDED-demo-not-private"  # core.balancing.names.SEEDED_MARKER
INTERNAL_NAME = "INTERNAL_pp_run_report_not_for_release.json"  # core.balancing.report (secure)


def _open(page, url: str) -> None:
    # open the app once first: the very first session of a fresh server that starts on a
    # sub-page URL can run before st.navigation is registered (legacy pages/ routing)
    page.goto(url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.goto(f"{url}/pp_balancing")
    page.get_by_role("heading", name="PP balancing").first.wait_for()


def _publish(page) -> None:
    button = page.get_by_role("button", name=PUBLISH)
    button.wait_for(timeout=120_000)
    _wait_idle(page)  # a click during a rerun can be lost
    button.click()
    _wait_published(page)


def _wait_published(page) -> None:
    _wait_idle(page)  # during a rerun the previous run's buttons may still be on screen
    page.get_by_role("button", name="Published CSV", exact=True).first.wait_for(timeout=120_000)
    page.get_by_role("button", name="Run report (INTERNAL)").first.wait_for()


def _expect_not_earlier(page) -> None:
    """The kept publication matches the settings on screen: no "Earlier publication" label.
    A waiting check (a session's settings come back over its first reruns); on failure it
    says which settings the page found different."""
    label = page.get_by_text(EARLIER)
    try:
        expect(label).to_have_count(0, timeout=30_000)
    except AssertionError:
        raise AssertionError(f"labelled earlier: {label.first.inner_text()}") from None


def _toggle_demo_mode(page) -> None:
    page.get_by_test_id("stSidebar").get_by_text("Reproducible demo mode", exact=True).click()
    _wait_idle(page)


def step_title(page, text: str):
    """The step chart's title (an SVG text node drawn by plotly)."""
    title = page.locator(".js-plotly-plot .gtitle", has_text=text).first
    title.wait_for(state="attached")
    return title


def test_step_through_example_6(page, app_url, external_requests, screenshot):
    _open(page, app_url)
    demo = page.get_by_role("combobox", name="Demo dataset")
    demo.wait_for()
    assert demo.input_value().startswith("pp-figure9")  # the Figure 9 demo is picked
    first = step_title(page, "Iteration 1: T0 has 42 records")
    page.get_by_text("Group g1 takes", exact=False).first.wait_for()
    bars_before = page.locator(".js-plotly-plot").nth(1).locator("g.point").count()
    assert bars_before > 0

    page.get_by_role("button", name="Next ▶").click()
    step_title(page, "Iteration 2: T0 has 24 records")
    page.get_by_text("Group g2 takes", exact=False).first.wait_for()
    expect(first).to_have_count(0, timeout=60_000)  # the chart of step 1 is replaced
    bars = page.locator(".js-plotly-plot").nth(1).locator("g.point")
    for _ in range(100):  # plotly redraws asynchronously after the rerun
        if bars.count() not in (0, bars_before):
            break
        page.wait_for_timeout(100)
    assert bars.count() not in (0, bars_before)  # 10 values in iteration 1, 9 in iteration 2

    page.get_by_role("button", name="Next ▶").scroll_into_view_if_needed()
    shot = screenshot(page, SCREENSHOT)
    assert shot.stat().st_size > 10_000
    assert external_requests == [], f"requests left localhost: {external_requests}"


def test_publish_then_use_the_page_like_a_class(page, app_url, external_requests, no_exception):
    _open(page, app_url)
    _toggle_demo_mode(page)  # seeded: the published file must say so in its name
    _publish(page)
    no_exception(page)

    # change a widget (the Phase 1 step): the publication stays, unlabelled
    page.get_by_role("button", name="Next ▶").click()
    _wait_idle(page)
    no_exception(page)
    _wait_published(page)
    _expect_not_earlier(page)

    # click every download: names say what each file is; each parses
    names, files = {}, {}
    for label in ("Published CSV", "Sub-table metadata", "Run report (INTERNAL)"):
        with page.expect_download() as info:
            page.get_by_role("button", name=label, exact=True).click()
        files[label] = Path(info.value.path()).read_bytes()
        names[label] = info.value.suggested_filename
        _wait_idle(page)
        no_exception(page)
    # the SA alone by default, a seeded header, one row per slot of the published (noisy) plan
    published = pd.read_csv(io.BytesIO(files["Published CSV"]))
    assert list(published.columns) == [SEEDED_MARKER, "SA", "subtable"]
    metadata = json.loads(files["Sub-table metadata"])
    assert len(published) == sum(s["size"] for s in metadata["subtables"])
    assert json.loads(files["Run report (INTERNAL)"])
    assert SEEDED_MARKER in names["Published CSV"] and names["Published CSV"].endswith(".csv")
    assert SEEDED_MARKER in names["Sub-table metadata"]
    assert names["Run report (INTERNAL)"].startswith(INTERNAL_NAME.removesuffix(".json"))
    assert SEEDED_MARKER in names["Run report (INTERNAL)"]
    _wait_published(page)

    # demo mode off: the seeded publication stays, labelled earlier; on again: unlabelled
    _toggle_demo_mode(page)
    no_exception(page)
    page.get_by_text(EARLIER).first.wait_for()
    _toggle_demo_mode(page)
    no_exception(page)
    _wait_published(page)
    _expect_not_earlier(page)

    # navigate Home and back: the publication is still there
    page.get_by_test_id("stSidebarNav").get_by_text("Home", exact=True).click()
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.get_by_test_id("stSidebarNav").get_by_text("PP balancing", exact=True).click()
    page.get_by_role("heading", name="PP balancing").first.wait_for()
    _wait_published(page)
    no_exception(page)

    # reload: the session's publication and demo mode are kept; publish again
    page.reload()
    page.get_by_role("heading", name="PP balancing").first.wait_for()
    _wait_published(page)
    _expect_not_earlier(page)
    _publish(page)
    no_exception(page)
    assert external_requests == [], f"requests left localhost: {external_requests}"


def test_second_browser_with_the_same_parameters(browser, app_url, no_exception):
    """Two students publish the Figure 9 demo at the same time: neither sees an exception."""
    with two_sessions(browser) as pages:
        for pg in pages:
            _open(pg, app_url)
            pg.get_by_role("button", name=PUBLISH).wait_for(timeout=120_000)
        for pg in pages:
            _publish(pg)
        for pg in pages:
            no_exception(pg)
            _wait_published(pg)


@pytest.mark.parametrize(
    ("name", "payload", "message"), bad_upload_cases(b"zip,disease\n", b"47677,flu\n")
)
def test_bad_upload_says_so_and_releases_nothing(
    page, small_upload_app_url, external_requests, no_exception, name, payload, message
):
    _open(page, small_upload_app_url)
    upload_bad_file(page, "Upload CSV/Parquet", name, payload, message)
    _wait_idle(page)
    no_exception(page)
    assert page.get_by_role("button", name=PUBLISH).count() == 0
    assert page.get_by_role("button", name="Published CSV", exact=True).count() == 0
    assert external_requests == []


# every text box of every plotly chart (title, legend, annotations, tick labels, axis titles)
OVERLAPS = """() => {
  const sel = '.gtitle, .legendtext, .annotation-text, .xtick text, .ytick text, '
            + '.g-xtitle text, .g-ytitle text';
  const out = [];
  document.querySelectorAll('.js-plotly-plot').forEach((plot, p) => {
    const boxes = Array.from(plot.querySelectorAll(sel)).map(e => {
      const r = e.getBoundingClientRect();
      return {t: e.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};
    }).filter(b => b.x1 > b.x0 && b.t.trim());
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
      const h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
      if (w > 1 && h > 1) out.push([p, a.t, b.t]);
    }
  });
  return out;
}"""


def test_chart_labels_never_overlap_at_1280x720(browser, app_url):
    """A teacher's 1280×720 screen: no label of any chart sits on another, at every Phase 1
    step of Figure 9, on the patients demo (T'' distributed) and on the publication chart."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        _open(page, app_url)
        step_title(page, "Iteration 1: T0 has 42 records")
        _wait_idle(page)
        for step in range(1, 6):
            if step > 1:
                page.get_by_role("button", name="Next ▶").click()
                step_title(page, f"Iteration {step}:")
                _wait_idle(page)
            page.wait_for_timeout(500)  # plotly lays out after the rerun
            assert page.evaluate(OVERLAPS) == [], f"step {step}"
        _publish(page)
        page.wait_for_timeout(500)
        assert page.evaluate(OVERLAPS) == [], "publication"
        demo = page.get_by_role("combobox", name="Demo dataset")
        for _ in range(5):  # retried: a late re-layout can close the list before the click
            _wait_idle(page)
            demo.click()
            try:
                page.get_by_role("option", name="pp-synthetic-patients").first.click(timeout=5000)
                break
            except Exception:  # noqa: BLE001
                page.keyboard.press("Escape")
        page.locator(".js-plotly-plot .gtitle", has_text="Iteration 1:").filter(
            has_not_text="42 records"
        ).first.wait_for()
        _wait_idle(page)
        page.wait_for_timeout(500)
        found = page.evaluate(OVERLAPS)
        assert found == [], f"patients demo: {found}"
    finally:
        context.close()


def test_each_step_fits_one_1280x720_screen(browser, app_url, no_exception):
    """Issue 32: at 1280×720 a Phase 1 step's sentences and its (full-width) chart are on the
    screen together, at every step of Figure 9; the chart's toolbar covers no title; the
    teaching view says it charges nothing; Play states the pace `ui.pace` keeps."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        _open(page, app_url)
        step_title(page, "Iteration 1: T0 has 42 records")
        _wait_idle(page)
        page.get_by_text("charges no budget").first.wait_for()
        play = page.get_by_test_id("stCheckbox").filter(has_text="▶ Play")
        assert f"one step every {PLAY_SECONDS:g} s" in play.inner_text()
        for step in range(1, 6):
            if step > 1:
                page.get_by_role("button", name="Next ▶").click()
                step_title(page, f"Iteration {step}:")
                _wait_idle(page)
            page.wait_for_timeout(500)  # plotly lays out after the rerun
            boxes = in_one_screen(page, ".st-key-pp_step_text", [".st-key-pp_step_chart"])
            assert boxes["fits"], (step, boxes)
            assert toolbar_over_titles(page, ".st-key-pp_step_chart") == [], f"step {step}"
        no_exception(page)
    finally:
        context.close()
