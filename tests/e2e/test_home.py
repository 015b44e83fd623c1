"""The Home page in a real browser: it loads, shows the mode, and makes the README screenshot."""

import pytest

pytestmark = pytest.mark.browser

SCREENSHOT = "home.png"  # written by the `screenshot` fixture (a temp dir; `make screenshots`)


def test_home_loads_and_shows_mode(page, app_url, external_requests, screenshot):
    page.goto(app_url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.get_by_text("Mode: secure").wait_for()
    page.get_by_test_id("stMain").get_by_role("link", name="Open Releases").wait_for()
    page.wait_for_timeout(500)  # the page links' rendering settles before the picture
    shot = screenshot(page, SCREENSHOT)
    assert shot.stat().st_size > 10_000
    assert external_requests == [], f"requests left localhost: {external_requests}"


def test_a_card_opens_every_page_at_1280x720(browser, app_url, no_exception):
    """Issue 32: a card with a link for every page (Releases included), inside a 1280 px
    screen, each link opening its page; the location card leads with Recommended."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    page.set_default_timeout(90_000)
    try:
        page.goto(app_url)
        page.get_by_role("heading", name="DP Explorer").first.wait_for()
        main = page.get_by_test_id("stMain")
        for title in ("Location histograms", "PP balancing", "DP SQL", "Releases"):
            link = main.get_by_role("link", name=f"Open {title}")
            link.wait_for()
            box = link.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 1280, (title, box)
        main.get_by_text("Recommended (private choice)").first.wait_for()
        main.get_by_role("link", name="Open Releases").click()
        page.get_by_role("heading", name="Releases").first.wait_for()
        no_exception(page)
    finally:
        context.close()
