"""The PP balancing page in a real browser: Figure 9 demo, step with Next, the chart changes."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

SCREENSHOT = Path("docs/screenshots/pp_balancing.png")


def chart_title(page) -> str:
    title = page.locator(".js-plotly-plot .gtitle", has_text="Iteration").first
    title.wait_for()
    return title.text_content()


def test_step_through_example_6(page, app_url, external_requests):
    page.goto(f"{app_url}/pp_balancing")
    page.get_by_role("heading", name="PP balancing").first.wait_for()
    try:
        assert chart_title(page).startswith("Iteration 1: T0 has 42 records")
    finally:
        page.screenshot(path="/tmp/pp_dbg.png", full_page=True)
    page.get_by_text("pp-figure9", exact=False).first.wait_for()  # the Figure 9 demo is picked
    page.get_by_text("Group g1", exact=False).first.wait_for()

    page.get_by_role("button", name="Next ▶").click()
    page.get_by_text("Iteration 2: T0 has 24 records").first.wait_for()
    page.get_by_text("Group g2", exact=False).first.wait_for()
    assert chart_title(page).startswith("Iteration 2")

    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.stat().st_size > 10_000
    assert external_requests == [], f"requests left localhost: {external_requests}"
