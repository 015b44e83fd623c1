"""The Home page in a real browser: it loads, shows the mode, and makes the README screenshot."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

SCREENSHOT = Path("docs/screenshots/home.png")


def test_home_loads_and_shows_mode(page, app_url, external_requests):
    page.goto(app_url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.get_by_text("Mode: secure").wait_for()
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.stat().st_size > 10_000
    assert external_requests == [], f"requests left localhost: {external_requests}"
