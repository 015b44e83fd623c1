"""State a person can trust, in a real browser (issue 18.2): a server killed (-9) in the middle of
a location build is noticed on screen at once (connection lost), and after a restart on the same
port and a reload the releases that build already charged are listed as "charged, not shown" —
on the tool page and on the Releases page — so nobody pays twice without knowing. Two browser
sessions keep apart; a reload keeps the DP SQL page's tab and query. Every wait is for a state a
user would wait for (robust under load)."""

from __future__ import annotations

import os
import time

import pytest
from playwright.sync_api import expect

from core.registry import Policy, Registry
from tests.e2e.conftest import AppServer, two_sessions
from tests.e2e.waiting import wait_idle as _wait_idle
from tests.registry.helpers import write_points

pytestmark = pytest.mark.browser

LOST = "Connection to the server lost"
SLOW_METHODS = ("HTF", "PrivTree", "QuadTree", "KdTree (geo)", "AG", "UG")


def _banner(page) -> str:
    """The text the app shows over everything while the connection is lost ('' otherwise)."""
    return page.evaluate(
        """() => {
            const s = getComputedStyle(document.body, '::before');
            return s.content !== 'none' && s.opacity === '1' ? s.content : '';
        }"""
    )


def _add_methods(page, labels) -> None:
    box = page.get_by_test_id("stMultiSelect").filter(has_text="Recommended (private choice)")
    for label in labels:
        box.locator("input").click()
        page.get_by_role("option", name=label, exact=True).click()
        page.keyboard.press("Escape")
        _wait_idle(page)


def _largest_grid(page) -> None:
    grid = page.get_by_test_id("stMain").get_by_role("slider").first  # the page's only slider
    for _ in range(10):  # retried: a rerun can swallow a key press
        if grid.get_attribute("aria-valuetext") == "2048":
            return
        grid.focus()
        grid.press("End")
        page.wait_for_timeout(500)
        _wait_idle(page)
    assert grid.get_attribute("aria-valuetext") == "2048"


def _pick(page, label: str, option: str) -> None:
    box, item = page.get_by_role("combobox", name=label), page.get_by_role("option", name=option)
    for _ in range(5):
        box.click()
        try:
            item.first.click(timeout=5000)
        except Exception:  # noqa: BLE001 - the list closed before the click: open it again
            page.keyboard.press("Escape")
            continue
        _wait_idle(page)
        if option in box.input_value():
            return
    raise AssertionError(f"could not choose {option!r} in {label!r}")


def _charged_by_app(registry: Registry, name: str) -> list:
    return [r for r in registry.releases(name) if r.params.get("session")]


@pytest.fixture
def big_points(tmp_path, registry_dir):
    """Registered dataset 'city' (60,000 points, ε 20) in the test's own registry."""
    path = write_points(tmp_path / "city.csv", n=60_000)
    Registry(registry_dir).add_dataset("city", [("t", path)], Policy(20.0), uid="uid")
    return "city"


def test_restart_during_a_build_lists_what_was_charged_and_not_shown(
    browser, big_points, registry_dir, external_requests
):
    server = AppServer(env=dict(os.environ)).start()  # DPX_REGISTRY: this test's registry
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{server.url}/location_histograms")
        page.get_by_role("heading", name="Location histograms").first.wait_for()
        page.get_by_text("Registered dataset").first.click()
        _wait_idle(page)
        page.get_by_text("Budget of dataset city").first.wait_for()
        _pick(page, "Bounding box", "Los Angeles")
        _largest_grid(page)
        _add_methods(page, SLOW_METHODS)
        page.get_by_text("7 releases").first.wait_for()
        page.get_by_role("button", name="Build releases", exact=True).click()
        registry = Registry(registry_dir)
        deadline = time.monotonic() + 600
        while not _charged_by_app(registry, big_points):  # the first charge is in the registry
            assert time.monotonic() < deadline, "the build never charged"
            time.sleep(0.05)
        server.kill9()
        charged = _charged_by_app(registry, big_points)
        assert charged  # at least one release was charged before the kill

        # the connection loss is on screen, unmistakably (not only Streamlit's small status)
        deadline = time.monotonic() + 60
        while LOST not in _banner(page):
            assert time.monotonic() < deadline, "no connection-lost notice"
            page.wait_for_timeout(250)

        server.start()  # the same port
        page.reload()
        page.get_by_role("heading", name="Location histograms").first.wait_for()
        box = page.locator(".st-key-lh_not_shown")
        box.get_by_text("Charged, not shown").wait_for(timeout=120_000)
        assert _banner(page) == ""
        charged = _charged_by_app(registry, big_points)
        listed = box.inner_text()
        for r in charged:
            assert f"#{r.id}" in listed
        # the same runs on the Releases page
        page.get_by_test_id("stSidebarNav").get_by_text("Releases", exact=True).click()
        page.get_by_role("heading", name="Charged, not shown").wait_for(timeout=120_000)
        listed = page.get_by_text("were charged but never shown").first.inner_text()
        for r in charged:
            assert f"#{r.id}" in listed
        assert external_requests == []
    finally:
        context.close()
        server.stop()


def test_two_sessions_keep_apart_and_a_reload_keeps_the_tab_and_query(app_url, browser):
    with two_sessions(browser) as (a, b):
        for pg in (a, b):
            pg.goto(f"{app_url}/dp_sql")
            pg.get_by_role("heading", name="DP SQL").first.wait_for()
            pg.locator(".st-key-dpsql_query textarea").wait_for()
            _wait_idle(pg)
        assert "s=" in a.url and "s=" in b.url and a.url != b.url  # one token each
        area = a.locator(".st-key-dpsql_query textarea")
        typed = area.input_value().replace("epsilon = 1", "epsilon = 0.25")
        area.fill(typed)
        area.press("Control+Enter")
        _wait_idle(a, start_ms=3000)  # the query is kept by the rerun it starts: let it finish
        a.get_by_role("tab", name="Ledger").click()
        a.get_by_role("tab", name="Ledger", selected=True).wait_for()
        _wait_idle(a, start_ms=3000)  # so is the tab: a reload before that would lose it
        a.reload()
        a.get_by_role("heading", name="DP SQL").first.wait_for()
        a.get_by_role("tab", name="Ledger", selected=True).wait_for(timeout=60_000)
        expect(a.locator(".st-key-dpsql_query textarea")).to_have_value(typed, timeout=60_000)
        # the other student's page is untouched
        assert "0.25" not in b.locator(".st-key-dpsql_query textarea").input_value()
        b.get_by_role("tab", name="Explain", selected=True).wait_for()
