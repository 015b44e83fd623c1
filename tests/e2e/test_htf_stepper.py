"""HTF step by step in a real browser: the Recommended (private choice) is the default and states
its choice; the stepper's level slider moves through the levels and shows the nodes, the split
candidates with their noisy objective values and each node's fate; in demo mode two sessions
get the same steps. No exception on screen, no request leaves localhost."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

BUILD = "Build releases"
STEPPER = "HTF step by step (teaching view)"


def _open(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.goto(f"{url}/location_histograms")
    page.get_by_role("heading", name="Location histograms").first.wait_for()
    # let the first script run finish: a click that interrupts it (the demo-mode toggle) leaves
    # the page's widgets at their minimum values (seen with Streamlit 1.67)
    _default_methods(page).wait_for(timeout=120_000)
    _wait_idle(page)


def _default_methods(page):
    """The methods box with its default (Recommended alone) — the page finished its first run."""
    return page.get_by_test_id("stMultiSelect").filter(has_text="Recommended (private choice)")


def _wait_idle(page) -> None:
    page.wait_for_timeout(300)
    page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=180_000)


def _demo_mode(page) -> None:
    page.get_by_text("Reproducible demo mode").first.click()
    page.get_by_test_id("stSidebar").get_by_text("Seed", exact=True).wait_for()
    page.get_by_text("reproducible demo mode").first.wait_for()
    _wait_idle(page)


def _slider(page):
    return page.get_by_test_id("stSlider").filter(has_text="Tree depth").get_by_role("slider")


def _build_and_open_stepper(page, no_exception) -> None:
    try:
        # the default methods are on screen (the page is not in the middle of a rerun)
        _default_methods(page).wait_for()
        _wait_idle(page)
        page.get_by_role("button", name=BUILD, exact=True).click()
        page.get_by_role("heading", name="Downloads").wait_for(timeout=240_000)
        _wait_idle(page)
        no_exception(page)
        page.get_by_text(STEPPER).click()
        _wait_idle(page)
        page.get_by_role("button", name="Build HTF step by step").click()
        _wait_idle(page)
        no_exception(page)
        _slider(page).wait_for(timeout=120_000)
    except Exception:
        page.screenshot(path="/tmp/stepper_fail.png", full_page=True)
        raise


def _figure(page) -> list[dict]:
    """The stepper figure's traces as drawn in the browser (Plotly keeps them on its div)."""
    return (
        _title(page)
        .locator("xpath=ancestor::div[contains(@class,'js-plotly-plot')][1]")
        .evaluate(
            "el => el.data.map(t => ({name: t.name || null, text: t.text || null, x: t.x, y: t.y}))"
        )
    )


def _texts(traces: list[dict]) -> str:
    return "\n".join(t for tr in traces for t in (tr["text"] or []))


def _title(page):
    """The stepper figure's title ("Height i: ..."), not another chart's."""
    return page.locator(".js-plotly-plot .gtitle").filter(has_text="Height ").last


def _go_to_level(page, level: int) -> None:
    """Move the level slider with the keyboard and wait until the figure shows the new level."""
    slider = _slider(page)
    before = _title(page).text_content()
    slider.focus()
    start = int(slider.input_value())
    moves = level - start
    for _ in range(moves):
        page.keyboard.press("ArrowRight")
    if moves:
        # depth d is height h - d: wait for the title of the target level itself, not for any
        # change (under load the first redraw may be of a level passed on the way)
        height = int(before.split(":")[0].removeprefix("Height ")) + start - level
        expect(_title(page)).to_have_text(re.compile(rf"^Height {height}:"), timeout=60_000)
    _wait_idle(page)
    assert int(_slider(page).input_value()) == level


def _second_session(browser, external_requests):
    """Another browser context (its own Streamlit session), guarded like the `page` fixture."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})

    def guard(route):
        host = urlparse(route.request.url).hostname or ""
        if route.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            external_requests.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    pg = context.new_page()
    pg.set_default_timeout(90_000)
    return context, pg


def test_recommended_choice_and_htf_stepper(
    page, browser, app_url, external_requests, no_exception
):
    _open(page, app_url)
    _demo_mode(page)
    page.get_by_text("When is the paper's HTF the best choice?").first.wait_for()
    _build_and_open_stepper(page, no_exception)
    # auto is built by default and says what it chose and why
    page.get_by_text("Recommended (private choice) built").first.wait_for()
    page.get_by_text("rule").first.wait_for()

    slider = _slider(page)
    top = int(slider.get_attribute("max"))  # react-aria: the thumb is an <input type="range">
    assert top >= 3  # several levels
    _title(page).wait_for(timeout=60_000)
    first_title = _title(page).text_content()
    _go_to_level(page, 2)
    no_exception(page)
    second_title = _title(page).text_content()
    assert first_title.startswith("Height ") and second_title.startswith("Height ")
    assert first_title != second_title  # a different level is drawn
    assert "ε spent so far" in second_title
    # the expander stayed open through the slider's reruns: the level's nodes (outlined and
    # labelled by fate, with their noisy counts), the candidate splits with their noisy
    # objective values, and the chosen splits are drawn
    traces = _figure(page)
    names = [t["name"] for t in traces if t["name"]]
    assert any(n.startswith("split (noisy count > stop count)") for n in names), names
    assert "candidate splits" in names and "chosen split" in names
    text = _texts(traces)
    assert "noisy count" in text and "noisy objective" in text and "(chosen)" in text
    # the last level: no node is split, so there are no candidates; every node says why it stopped
    _go_to_level(page, top)
    last = _figure(page)
    assert "candidate splits" not in [t["name"] for t in last]
    assert "stopped" in _texts(last)
    no_exception(page)

    # demo mode is reproducible for a class: a second session with the same seed sees the same
    # level-2 steps (noisy counts, candidates, objective values, chosen offsets)
    context, other = _second_session(browser, external_requests)
    try:
        _open(other, app_url)
        _demo_mode(other)
        _build_and_open_stepper(other, no_exception)
        _go_to_level(other, 2)
        assert _figure(other) == traces  # same nodes, noisy counts, candidates and values
    finally:
        context.close()
    assert external_requests == [], f"requests left localhost: {external_requests}"
