"""The PP balancing page in a real browser: Figure 9 demo, step with Next, the chart changes."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

SCREENSHOT = "pp_balancing.png"  # written by the `screenshot` fixture (temp dir)


def step_title(page, text: str):
    """The step chart's title (an SVG text node drawn by plotly)."""
    title = page.locator(".js-plotly-plot .gtitle", has_text=text).first
    title.wait_for(state="attached")
    return title


def test_step_through_example_6(page, app_url, external_requests, screenshot):
    # open the app once first: the very first session of a fresh server that starts on a
    # sub-page URL can run before st.navigation is registered (legacy pages/ routing)
    page.goto(app_url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.goto(f"{app_url}/pp_balancing")
    page.get_by_role("heading", name="PP balancing").first.wait_for()
    demo = page.get_by_role("combobox", name="Demo dataset")
    demo.wait_for()
    assert demo.input_value().startswith("pp-figure9")  # the Figure 9 demo is picked
    first = step_title(page, "Iteration 1: T0 has 42 records")
    page.get_by_text("Group g1", exact=False).first.wait_for()
    bars_before = page.locator(".js-plotly-plot").nth(1).locator("g.point").count()
    assert bars_before > 0

    page.get_by_role("button", name="Next ▶").click()
    step_title(page, "Iteration 2: T0 has 24 records")
    page.get_by_text("Group g2", exact=False).first.wait_for()
    assert first.count() == 0 or "Iteration 1" not in (first.text_content() or "")
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
