"""Location histograms in a real browser, used the way a class uses it: build (charged releases),
evaluate (owner only), then change a widget, click every download, toggle demo mode, reload, navigate away and back, a second browser
with the same parameters, bad uploads — never an exception on screen, results still there. Also
draws a >= 10k-leaf layer over the offline boundaries and takes the README screenshot. Every
request that would leave localhost is blocked and must not happen."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import bad_upload_cases, two_sessions, upload_bad_file
from tests.e2e.waiting import wait_idle as _wait_idle

pytestmark = pytest.mark.browser

SCREENSHOT = "location_histograms.png"  # via the `screenshot` fixture (temp dir)
BUILD = "Build releases"
EVALUATE = "Evaluate the releases (evaluation only — uses raw data)"
DOWNLOADS = (
    "Release GeoJSON",
    "Release CSV",
    "Release CSV metadata (JSON)",
    "Run report (JSON)",
    "MRE CSV (evaluation only)",
)


def _open(page, url: str) -> None:
    # the app root first, so st.navigation is registered before the sub-page's session
    page.goto(url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.goto(f"{url}/location_histograms")
    page.get_by_role("heading", name="Location histograms").first.wait_for()


# the releases' st_folium iframe, not the map of the demo's HTF stepper (issue 32), which is
# on the page from the start
RELEASE_MAP = (
    "xpath=//iframe[contains(@title, 'streamlit_folium')]"
    "[not(ancestor::*[contains(@class, 'st-key-lh_step_map_box')])]"
)


def _map_frame(page):
    """The st_folium iframe (a Streamlit component) holding the releases' Leaflet map."""
    page.locator(RELEASE_MAP).first.wait_for(timeout=120_000)
    return page.frame_locator(RELEASE_MAP).first


def _add_method(page, label: str) -> None:
    """Add `label` to the Methods box (the default is Recommended alone)."""
    box = page.get_by_test_id("stMultiSelect").filter(has_text="Recommended (private choice)")
    box.locator("input").click()
    page.get_by_role("option", name=label, exact=True).click()
    page.keyboard.press("Escape")
    _wait_idle(page)


def _build(page) -> None:
    page.get_by_role("button", name=BUILD, exact=True).click()
    _wait_results(page)


def _wait_results(page) -> None:
    page.get_by_role("heading", name="Downloads").wait_for(timeout=120_000)
    _map_frame(page).locator(".leaflet-container").wait_for(timeout=120_000)
    page.get_by_role("heading", name="Charged releases").wait_for()


def _expect_not_stale(page) -> None:
    """No "previous build" label: the results match the settings on screen. A waiting check
    (a session's settings come back over its first reruns); on failure it quotes the label."""
    label = page.get_by_text("previous build")
    try:
        expect(label).to_have_count(0, timeout=30_000)
    except AssertionError:
        raise AssertionError(f"labelled stale: {label.first.inner_text()}") from None


def _evaluate(page) -> None:
    page.get_by_role("button", name=EVALUATE).click()
    _wait_evaluation(page)


def _wait_evaluation(page) -> None:
    page.get_by_text("MRE by query size").first.wait_for(timeout=300_000)
    page.get_by_text("Evaluation cost").first.wait_for()


def _pick(page, label: str, option: str) -> None:
    """Choose `option` in the selectbox `label` (retried: a late re-layout can close the list)."""
    box, item = page.get_by_role("combobox", name=label), page.get_by_role("option", name=option)
    for _ in range(5):
        box.click()
        try:
            item.first.wait_for(timeout=3000)
            item.first.click(timeout=3000)
            break
        except Exception:  # noqa: BLE001 - the list closed before the click: open it again
            page.keyboard.press("Escape")
    _wait_idle(page)
    assert box.input_value() == option


def _toggle_demo_mode(page) -> None:
    page.get_by_test_id("stSidebar").get_by_text("Reproducible demo mode", exact=True).click()
    _wait_idle(page)


def test_build_then_use_the_page_like_a_class(page, app_url, external_requests, no_exception):
    _open(page, app_url)
    _add_method(page, "UG")
    _build(page)
    no_exception(page)
    page.get_by_text("Recorded as unregistered runs").first.wait_for()  # a demo table, like the CLI
    _evaluate(page)
    no_exception(page)

    # change "Release to download": the page reruns with the same results
    _pick(page, "Release to download", "UG")
    no_exception(page)
    _wait_results(page)

    # click every download; each file is complete and parses
    for label in DOWNLOADS:
        with page.expect_download() as info:
            page.get_by_role("button", name=label, exact=True).click()
        data = Path(info.value.path()).read_bytes()
        _wait_idle(page)
        no_exception(page)
        if label.endswith("CSV") or "CSV (" in label:
            assert len(pd.read_csv(io.BytesIO(data))) > 0, label  # plain CSV, no comment lines
        else:
            assert json.loads(data), label
    _wait_results(page)
    _wait_evaluation(page)

    # demo mode on: the old results stay, labelled stale; off again: the same results, unlabelled
    _toggle_demo_mode(page)
    no_exception(page)
    page.get_by_text("previous build").first.wait_for()
    _toggle_demo_mode(page)
    no_exception(page)
    _wait_results(page)
    _expect_not_stale(page)

    # navigate Home and back: inputs and results are still there
    page.get_by_test_id("stSidebarNav").get_by_text("Home", exact=True).click()
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.get_by_test_id("stSidebarNav").get_by_text("Location histograms", exact=True).click()
    _wait_results(page)
    _wait_evaluation(page)  # the evaluation of this build is kept too
    no_exception(page)
    _expect_not_stale(page)
    chosen = page.get_by_role("combobox", name="Release to download").input_value()
    assert chosen.strip(), "no release chosen for download"

    # reload (F5): the session's build and evaluation are kept (server-side); build again
    page.reload()
    _wait_results(page)
    _wait_evaluation(page)
    _expect_not_stale(page)
    _build(page)
    no_exception(page)
    assert external_requests == [], f"requests left localhost: {external_requests}"


def test_second_browser_with_the_same_parameters(browser, app_url, no_exception):
    """Two students, the default demo, both press Build: neither sees an exception."""
    with two_sessions(browser) as pages:
        for pg in pages:
            _open(pg, app_url)
            _add_method(pg, "UG")
        for pg in pages:
            _build(pg)
        for pg in pages:
            _pick(pg, "Release to download", "UG")
            _wait_results(pg)
            no_exception(pg)


@pytest.mark.parametrize(
    ("name", "payload", "message"), bad_upload_cases(b"lat,lon\n", b"48.85,2.35\n")
)
def test_bad_upload_says_so_and_releases_nothing(
    page, small_upload_app_url, external_requests, no_exception, name, payload, message
):
    _open(page, small_upload_app_url)
    upload_bad_file(page, "Upload CSV/Parquet", name, payload, message)
    _wait_idle(page)
    no_exception(page)
    assert page.get_by_role("button", name=BUILD, exact=True).count() == 0
    assert page.locator("iframe[title*='streamlit_folium']").count() == 0
    assert page.get_by_role("heading", name="Downloads").count() == 0
    assert external_requests == []


def test_large_layer_over_offline_boundaries(page, app_url, external_requests, screenshot):
    _open(page, app_url)
    page.get_by_role("button", name=BUILD, exact=True).wait_for()
    # seeded demo mode (the app's sidebar switch): the releases, and so the leaf counts, are fixed
    _toggle_demo_mode(page)
    page.get_by_text("Seeded noise").first.wait_for()
    for label in ("HTF", "UG", "QuadTree"):
        _add_method(page, label)
    # epsilon 0.5 -> 1.0: UG then has ~100 x 100 = 10,000 cells (a 10k-leaf layer)
    slider = page.get_by_role("slider").first
    for _ in range(20):
        if slider.get_attribute("aria-valuetext") == "1.0":
            break
        slider.focus()
        slider.press("ArrowRight")
        page.wait_for_timeout(500)
    assert slider.get_attribute("aria-valuetext") == "1.0"
    _build(page)

    frame = _map_frame(page)
    frame.locator(".leaflet-overlay-pane canvas").first.wait_for()  # prefer_canvas drawing
    control = frame.locator(".leaflet-control-layers")
    control.wait_for()
    assert "HTF (" in control.inner_text()  # display names, not method keys
    frame.locator(".dpx-legend").first.wait_for()  # the shown layer's density legend
    assert "noisy points per km²" in frame.locator(".dpx-legend").first.inner_text()
    # turn on the largest layer (>= 10k leaves: UG and QuadTree at epsilon 1 on 256 x 256)
    labels = frame.locator(".leaflet-control-layers-overlays label")
    texts = labels.all_inner_texts()
    sizes = [
        int(t.rsplit("(", 1)[1].split()[0].replace(",", "")) if "leaves" in t else 0 for t in texts
    ]
    big = labels.nth(sizes.index(max(sizes)))
    assert max(sizes) >= 10_000
    big.locator("input").check()
    assert big.locator("input").is_checked()

    page.get_by_text("Budget breakdown").first.wait_for()
    # Streamlit scrolls inside its own container: a tall viewport shows map and charts at once
    page.set_viewport_size({"width": 1400, "height": 2300})
    page.get_by_role("heading", name="Partitions").scroll_into_view_if_needed()
    page.wait_for_timeout(2000)
    shot = screenshot(page, SCREENSHOT)
    assert shot.stat().st_size > 20_000
    assert external_requests == [], f"requests left localhost: {external_requests}"


def test_switching_to_an_upload_keeps_grid_and_methods(page, app_url, no_exception):
    """Widgets hidden while no file is uploaded keep their values in a real browser (with
    `persist` alone the grid fell back to 64 and the methods emptied: no build possible)."""
    rng = np.random.default_rng(0)
    csv = pd.DataFrame(
        {"lat": rng.normal(48.85, 0.02, 2000), "lon": rng.normal(2.35, 0.02, 2000)}
    ).to_csv(index=False)
    _open(page, app_url)
    page.get_by_role("button", name=BUILD, exact=True).wait_for()
    _add_method(page, "UG")
    page.get_by_role("button", name=BUILD, exact=True).wait_for()
    page.get_by_text("Upload CSV/Parquet").click()
    _wait_idle(page)
    page.locator("input[type='file']").set_input_files(
        files=[{"name": "paris.csv", "mimeType": "text/csv", "buffer": csv.encode()}]
    )
    page.get_by_role("combobox", name="Bounding box").wait_for()
    _wait_idle(page)
    _pick(page, "Bounding box", "Paris (inner suburbs)")
    page.get_by_text("2 releases, ε 0.5 each").first.wait_for()  # the chosen methods are kept
    grid = page.get_by_test_id("stMain").get_by_role("slider").first
    assert grid.get_attribute("aria-valuetext") == "1024"
    assert page.get_by_role("button", name=BUILD, exact=True).count() == 1
    no_exception(page)
