"""Location histograms in a real browser: run a comparison on a demo, see the map and the chart,
draw a ~10k-leaf layer, and take the README screenshot — with every non-localhost request blocked."""

import pytest

pytestmark = pytest.mark.browser

SCREENSHOT = "location_histograms.png"  # via the `screenshot` fixture (temp dir)


def _map_frame(page):
    """The st_folium iframe (a Streamlit component) holding the Leaflet map."""
    page.locator("iframe[title*='streamlit_folium']").first.wait_for(timeout=120_000)
    return page.frame_locator("iframe[title*='streamlit_folium']").first


def test_comparison_shows_map_and_chart(page, app_url, external_requests, screenshot):
    page.goto(f"{app_url}/location_histograms")
    page.get_by_role("heading", name="Location histograms").first.wait_for()
    page.get_by_role("button", name="Build releases and compare").wait_for()
    # seeded demo mode (the app's sidebar switch): the releases, and so the leaf counts, are fixed
    page.get_by_text("Reproducible demo mode").click()
    page.get_by_text("Seeded noise").first.wait_for()
    # epsilon 0.5 -> 1.0: UG then has ~100 x 100 = 10,000 cells (a 10k-leaf layer)
    slider = page.get_by_role("slider").first
    for _ in range(20):
        if slider.get_attribute("aria-valuetext") == "1.0":
            break
        slider.focus()
        slider.press("ArrowRight")
        page.wait_for_timeout(500)
    assert slider.get_attribute("aria-valuetext") == "1.0"
    page.get_by_role("button", name="Build releases and compare").click()

    frame = _map_frame(page)
    frame.locator(".leaflet-container").wait_for(timeout=120_000)
    frame.locator(".leaflet-overlay-pane canvas").first.wait_for()  # prefer_canvas drawing
    control = frame.locator(".leaflet-control-layers")
    control.wait_for()
    assert "htf (" in control.inner_text()
    # turn on the largest layer (>= 10k leaves: UG and QuadTree at epsilon 1 on 256 x 256)
    labels = frame.locator(".leaflet-control-layers-overlays label")
    sizes = [int(t.split("(")[1].split()[0]) for t in labels.all_inner_texts()]
    big = labels.nth(sizes.index(max(sizes)))
    assert max(sizes) >= 10_000
    big.locator("input").check()
    assert big.locator("input").is_checked()

    page.locator(".js-plotly-plot").first.wait_for()
    page.get_by_text("MRE by query size").first.wait_for()
    page.get_by_text("Budget breakdown").first.wait_for()
    # Streamlit scrolls inside its own container: a tall viewport shows map and charts at once
    page.set_viewport_size({"width": 1400, "height": 2300})
    page.get_by_role("heading", name="Partitions").scroll_into_view_if_needed()
    page.wait_for_timeout(2000)
    shot = screenshot(page, SCREENSHOT)
    assert shot.stat().st_size > 20_000
    assert external_requests == [], f"requests left localhost: {external_requests}"
