"""The Home page in a real browser: it loads, shows the mode, and makes the README screenshot."""

import pytest

pytestmark = pytest.mark.browser

SCREENSHOT = "home.png"  # written by the `screenshot` fixture (a temp dir; `make screenshots`)


def test_home_loads_and_shows_mode(page, app_url, external_requests, screenshot):
    page.goto(app_url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.get_by_text("Mode: secure").wait_for()
    shot = screenshot(page, SCREENSHOT)
    assert shot.stat().st_size > 10_000
    assert external_requests == [], f"requests left localhost: {external_requests}"
