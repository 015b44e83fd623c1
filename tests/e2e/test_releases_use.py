"""The Releases page used like people use it (owner mode): filter by tool, download a report,
toggle demo mode, navigate away and back, reload, a second browser — the list and the budgets
stay, no exception on screen, no request leaves localhost. A release made elsewhere (`dpx`)
shows in a second browser and after a reload (one registry, not a session's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main
from tests.e2e.waiting import wait_idle as _idle
from tests.registry.helpers import BBOX, write_points

pytestmark = pytest.mark.browser


def _run(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _open_releases(page, url: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.get_by_test_id("stSidebarNav").get_by_text("Releases", exact=True).click()
    page.get_by_role("heading", name="Releases").first.wait_for()
    _idle(page)


def _listed(page, release_id: int, name: str) -> None:
    page.get_by_text(f"#{release_id} · location · htf · {name}").first.wait_for()


def test_releases_page_used_like_a_review_meeting(
    browser, page, app_url, external_requests, no_exception, capsys, tmp_path
):
    name = f"review-{tmp_path.name[-10:]}"
    points = write_points(tmp_path / "pts.csv")
    _run(
        capsys, ["dataset", "add", name, "--table", f"t={points}", "--uid", "uid", "--epsilon", "5"]
    )
    release_id = _run(
        capsys, ["htf", "--dataset", name, "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )["registry"]["release_id"]
    _open_releases(page, app_url)
    _listed(page, release_id, name)
    page.get_by_text("ε spent 1 of 5 (remaining 4)").first.wait_for()

    # change a widget: drop the tool "location" from the filter, the row goes; the page survives
    tools = page.locator(".st-key-rel_tools")
    chips = lambda: tools.inner_text().strip().splitlines()[1:]  # noqa: E731 - after the label
    for _ in range(20):  # the chips can render a moment after the page went idle
        if "location" in chips():
            break
        page.wait_for_timeout(500)
    assert "location" in chips()
    for _ in range(
        12
    ):  # Backspace removes the last chip (tools are sorted): until location is gone
        tools.locator("input").click()
        page.keyboard.press("Backspace")
        _idle(page)
        if "location" not in chips():
            break
    _idle(page)
    no_exception(page)
    # the chips change in the browser at once; the list follows when the page's rerun is done
    row = page.get_by_text(f"#{release_id} · location · htf · {name}")
    row.first.wait_for(state="detached", timeout=30_000)
    assert row.count() == 0

    # the report download is a complete HTML file (after a reload, filters back to all)
    page.reload()
    page.get_by_role("heading", name="Releases").first.wait_for()
    _listed(page, release_id, name)
    with page.expect_download() as info:
        page.locator(f".st-key-report_{release_id} button").click()
    html = Path(info.value.path()).read_text(encoding="utf-8")
    assert f"Release #{release_id}" in html and html.rstrip().endswith("</html>")
    _idle(page)
    no_exception(page)

    # demo mode on and off, Home and back: the list and the budget are still there
    sidebar = page.get_by_test_id("stSidebar")
    for _ in range(2):
        sidebar.get_by_text("Reproducible demo mode", exact=True).click()
        _idle(page)
        no_exception(page)
        _listed(page, release_id, name)
    page.get_by_test_id("stSidebarNav").get_by_text("Home", exact=True).click()
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.get_by_test_id("stSidebarNav").get_by_text("Releases", exact=True).click()
    _listed(page, release_id, name)
    no_exception(page)

    # a second browser sees the same registry, including a release made after the first opened
    second = _run(
        capsys, ["htf", "--dataset", name, "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )["registry"]["release_id"]
    other = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        pg = other.new_page()
        pg.set_default_timeout(90_000)
        _open_releases(pg, app_url)
        _listed(pg, second, name)
        pg.get_by_text("ε spent 2 of 5 (remaining 3)").first.wait_for()
        no_exception(pg)
    finally:
        other.close()
    page.reload()
    page.get_by_text("ε spent 2 of 5 (remaining 3)").first.wait_for()  # and the first, reloaded
    assert external_requests == []
