"""HTF step by step in a real browser (issue 32): on a demo it is a classroom — open from the start,
before any Build, seeded, charging nothing; the depth slider moves through the depths, drawn on
the grid (nodes, split candidates with their noisy scores, each node's fate) and on the map;
two sessions with the same seed see the same steps; at 1280×720 a depth's sentences, its chart
and its map fit one screen and the chart's toolbar covers no title; Play keeps the pace its
label states (never faster; the page says the pace it measured). No exception on screen, no
request leaves localhost."""

from __future__ import annotations

import re
import time
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import WAIT_MS, in_one_screen, toolbar_over_titles
from tests.e2e.waiting import wait_idle as _wait_idle
from ui.location.stepper import PLAY_SECONDS

pytestmark = pytest.mark.browser

STEPPER = "HTF step by step (teaching view)"
TEXT = ".st-key-lh_step_text"  # the depth's sentences (a keyed container)
CHART = ".st-key-lh_step_chart"
MAP = ".st-key-lh_step_map_box iframe"


def _open(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.goto(f"{url}/location_histograms")
    page.get_by_role("heading", name="Location histograms").first.wait_for()
    # let the first script run finish: a click that interrupts it (the demo-mode toggle) leaves
    # the page's widgets at their minimum values (seen with Streamlit 1.67)
    page.get_by_test_id("stMultiSelect").filter(has_text="Recommended (private choice)").wait_for(
        timeout=120_000
    )
    _wait_idle(page)


def _demo_mode(page) -> None:
    page.get_by_text("Reproducible demo mode").first.click()
    page.get_by_test_id("stSidebar").get_by_text("Seed", exact=True).wait_for()
    _wait_idle(page)


def _slider(page):
    return page.get_by_test_id("stSlider").filter(has_text="Tree depth").get_by_role("slider")


def _stepper_open(page) -> None:
    """The classroom stepper, open without any Build (nothing charged: no Downloads)."""
    page.get_by_text(STEPPER).first.wait_for()
    _slider(page).wait_for(timeout=120_000)
    page.get_by_text("charges no budget").first.wait_for()
    assert page.get_by_role("button", name="Build HTF step by step").count() == 0
    assert page.get_by_role("heading", name="Downloads").count() == 0  # nothing was built


def _title(page):
    """The stepper figure's title ("Depth d of h: ..."), not another chart's."""
    return page.locator(f"{CHART} .gtitle").first


def _figure(page) -> list[dict]:
    """The stepper figure's traces as drawn in the browser (Plotly keeps them on its div)."""
    return page.locator(f"{CHART} .js-plotly-plot").first.evaluate(
        "el => el.data.map(t => ({name: t.name || null, text: t.text || null, x: t.x, y: t.y}))"
    )


def _texts(traces: list[dict]) -> str:
    return "\n".join(t for tr in traces for t in (tr["text"] or []))


def _go_to_level(page, level: int) -> None:
    """Move the depth slider with the keyboard and wait until the figure shows that depth."""
    slider = _slider(page)
    slider.focus()
    moves = level - int(slider.input_value())
    for _ in range(abs(moves)):
        page.keyboard.press("ArrowRight" if moves > 0 else "ArrowLeft")
    expect(_title(page)).to_have_text(re.compile(rf"^Depth {level} of "), timeout=60_000)
    _wait_idle(page)
    assert int(_slider(page).input_value()) == level


def _context(browser, external_requests, width=1400, height=1000):
    """A browser context (its own Streamlit session), guarded like the `page` fixture."""
    context = browser.new_context(viewport={"width": width, "height": height})

    def guard(route):
        host = urlparse(route.request.url).hostname or ""
        if route.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            external_requests.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    pg = context.new_page()
    pg.set_default_timeout(WAIT_MS)
    return context, pg


def test_a_demo_is_a_classroom_and_the_same_seed_gives_the_same_steps(
    page, browser, app_url, external_requests, no_exception
):
    _open(page, app_url)
    _demo_mode(page)
    _stepper_open(page)
    top = int(_slider(page).get_attribute("max"))  # react-aria: the thumb is an <input>
    assert top >= 3
    _go_to_level(page, 2)
    no_exception(page)
    assert "ε spent so far" in _title(page).text_content()
    # the depth's areas, outlined and labelled by fate with their noisy counts, the candidate
    # cuts with their noisy scores, and the chosen cuts
    traces = _figure(page)
    names = [t["name"] for t in traces if t["name"]]
    assert any(n.startswith("split (noisy count > stop count)") for n in names), names
    assert "candidate splits" in names and "chosen split" in names
    text = _texts(traces)
    assert "noisy count" in text and "noisy objective" in text and "(chosen)" in text
    # the same depth on the map: Leaflet drew its areas (the map's legend names the fates)
    frame = page.frame_locator(MAP)
    frame.locator(".leaflet-container").wait_for()
    expect(frame.locator(".dpx-legend")).to_contain_text("split (noisy count > stop count)")
    # the last depth: nothing is cut, so no candidates; every area says why it stopped
    _go_to_level(page, top)
    last = _figure(page)
    assert "candidate splits" not in [t["name"] for t in last]
    assert "stopped" in _texts(last)
    no_exception(page)

    # reproducible for a class: a second session with the same seed sees the same depth 2
    context, other = _context(browser, external_requests)
    try:
        _open(other, app_url)
        _demo_mode(other)
        _stepper_open(other)
        _go_to_level(other, 2)
        _go_to_level(page, 2)
        assert _figure(other) == _figure(page)  # same areas, noisy counts, candidates, scores
    finally:
        context.close()
    assert external_requests == [], f"requests left localhost: {external_requests}"


def test_a_depth_fits_one_1280x720_screen(browser, app_url, external_requests, no_exception):
    context, page = _context(browser, external_requests, 1280, 720)
    try:
        _open(page, app_url)
        _stepper_open(page)
        for level in (0, 2):
            _go_to_level(page, level)
            page.frame_locator(MAP).locator(".leaflet-container").wait_for()
            boxes = in_one_screen(page, TEXT, [CHART, MAP])
            assert boxes["fits"], boxes
            assert toolbar_over_titles(page, CHART) == [], f"depth {level}"
        no_exception(page)
    finally:
        context.close()
    assert external_requests == []


def test_play_keeps_the_pace_its_label_states(browser, app_url, external_requests, no_exception):
    context, page = _context(browser, external_requests)
    try:
        _open(page, app_url)
        _stepper_open(page)
        top = int(_slider(page).get_attribute("max"))
        start = max(0, top - 5)
        _go_to_level(page, start)
        toggle = page.get_by_test_id("stCheckbox").filter(has_text="▶ Play")
        label = toggle.inner_text()
        assert f"one depth every {PLAY_SECONDS:g} s" in label  # the same constant as the clock
        toggle.locator("label").click()
        seen, times, measured = start, [], set()
        note = page.get_by_text(re.compile(r"^Measured: one depth every"))
        deadline = time.monotonic() + 180
        while seen < top and time.monotonic() < deadline:
            title = _title(page).text_content() or ""
            m = re.match(r"Depth (\d+) of", title)
            if m and int(m.group(1)) > seen:
                seen = int(m.group(1))
                times.append(time.monotonic())
            for text in note.all_inner_texts():  # no wait: the next rerun may replace the note
                measured.update(re.findall(r"every ([0-9.]+) s", text))
            page.wait_for_timeout(25)
        assert seen == top, f"Play stopped at depth {seen} of {top}"
        # the page's own measure (the server's clock): never faster than the label says
        assert measured and min(float(x) for x in measured) >= PLAY_SECONDS - 0.05, measured
        # the browser's: the mean time per depth (a redraw's jitter spread over the steps) is
        # not below the stated pace; slower happens under load, and the page then says so
        mean = (times[-1] - times[0]) / (len(times) - 1)
        assert mean >= 0.75 * PLAY_SECONDS, times
        _wait_idle(page)
        assert int(_slider(page).input_value()) == top  # Play stopped at the last depth
        no_exception(page)
    finally:
        context.close()
    assert external_requests == []
