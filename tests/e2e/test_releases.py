"""Browser tests: a release report opens offline from file:// with its figures; the Releases
page shows the registry's budget and hands out the same report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.cli import main
from tests.registry.helpers import BBOX, QUERY, write_points

pytestmark = pytest.mark.browser


def _run(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_report_opens_offline_with_its_figures(browser, capsys, registry_dir, tmp_path):
    points = write_points(tmp_path / "pts.csv")
    _run(capsys, ["dataset", "add", "pts", "--table", f"t={points}", "--epsilon", "2"])
    htf = _run(capsys, ["htf", "--dataset", "pts", BBOX, "--epsilon", "1"])
    report = tmp_path / "report.html"
    _run(capsys, ["report", str(htf["registry"]["release_id"]), "--out", str(report)])

    context = browser.new_context(offline=True)
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.goto(report.as_uri())
    leaves = page.locator("svg.leaves-map rect")
    assert leaves.count() == htf["n_leaves"]
    assert page.locator("svg.leaves-map").first.is_visible()
    box = page.locator("svg.leaves-map").first.bounding_box()
    assert box["width"] > 100 and box["height"] > 100
    page.get_by_role("heading", name="Privacy guarantee").wait_for()
    assert [u for u in requests if not u.startswith("file:")] == []
    context.close()


def test_releases_page_shows_the_registry_and_downloads_a_report(
    page, app_url, external_requests, capsys, tmp_path
):
    # the app server reads the session registry (DPX_REGISTRY from tests/conftest.py)
    assert os.environ["DPX_REGISTRY"]
    points = write_points(tmp_path / "pts.csv")
    name = f"e2e-{tmp_path.name[-12:]}"
    _run(capsys, ["dataset", "add", name, "--table", f"t={points}", "--epsilon", "4"])
    out = _run(capsys, ["htf", "--dataset", name, BBOX, "--epsilon", "1"])
    release_id = out["registry"]["release_id"]

    page.goto(f"{app_url}/releases")
    page.get_by_role("heading", name="Releases").first.wait_for()
    page.get_by_text("ε spent 1 of 4 (remaining 3)").first.wait_for()
    row = page.get_by_text(f"#{release_id} · htf · {name}").first
    row.wait_for()
    with page.expect_download() as info:
        page.locator(f".st-key-report_{release_id} button").click()
    saved = Path(tmp_path / "downloaded.html")
    info.value.save_as(saved)
    html = saved.read_text(encoding="utf-8")
    assert f"Release #{release_id}" in html and "leaves-map" in html
    assert external_requests == []


def _release_on_dp_sql_page(page, url: str, name: str) -> int:
    """Analyst mode: run a DP SQL release on registered dataset `name` from the page; its
    budget moves from 2 to 3 of 4 in the registry, and no tab shows the sentinel."""
    from core.registry import Registry

    registry = Registry()
    assert registry.spent(name)[0] == 2.0
    page.goto(f"{url}/dp_sql")
    page.get_by_role("heading", name="DP SQL").first.wait_for()
    assert page.locator(".st-key-dpsql_source").get_by_text("Upload").count() == 0
    page.locator(".st-key-dpsql_dataset").click()
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    page.get_by_text(f"Budget of {name}").first.wait_for()
    area = page.locator(".st-key-dpsql_query textarea")
    area.fill(QUERY.format(eps=1))
    area.press("Control+Enter")
    page.get_by_role("tab", name="Run").click()
    page.locator(".st-key-dpsql_run button").click()
    page.get_by_text("Partitions released").first.wait_for()
    assert registry.spent(name)[0] == 3.0  # the registry's budget, charged from the page
    assert page.get_by_role("tab", name="Teaching").count() == 0
    page.get_by_role("tab", name="Ledger").click()
    page.get_by_text("spent ε = 3 of 4").first.wait_for()
    html = page.content()
    assert SENTINEL not in html and SENTINEL_LAT not in html
    (last,) = [r for r in registry.releases(name) if r.params.get("via") == "app"]
    return last.id


SENTINEL = "ZQX-SENTINEL-4417"
SENTINEL_LAT = "34.0123456789"


@pytest.fixture
def analyst_app_url(monkeypatch):
    """A server started with DPX_MODE=analyst (the environment is inherited)."""
    from tests.e2e.conftest import serve_app

    monkeypatch.setenv("DPX_MODE", "analyst")
    with serve_app() as url:
        yield url


def test_analyst_mode_never_shows_a_raw_value(
    page, analyst_app_url, external_requests, capsys, tmp_path
):
    points = write_points(tmp_path / "pts.csv")
    with points.open("a") as fh:  # one planted row: a unique category and a unique latitude
        fh.write(f"999999,{SENTINEL_LAT},-118.2,{SENTINEL}\n")
    name = f"sentinel-{tmp_path.name[-10:]}"
    _run(capsys, ["dataset", "add", name, "--table", f"t={points}", "--uid", "uid",
                  "--epsilon", "4", "--delta", "1e-5"])  # fmt: skip
    ids = [
        _run(capsys, ["htf", "--dataset", name, BBOX, "--epsilon", "1"])["registry"]["release_id"],
        _run(capsys, ["sql", "--dataset", name, "--query", QUERY.format(eps=1)])["registry"][
            "release_id"
        ],
    ]
    for path in ("", "/releases", "/dp_sql", "/location_histograms", "/pp_balancing"):
        page.goto(f"{analyst_app_url}{path}")
        page.get_by_test_id("stSidebar").get_by_text("Analyst mode").wait_for()
        page.wait_for_timeout(1500)  # let the page finish rendering
        html = page.content()
        titles = page.locator("h1").all_inner_texts()
        assert titles and not {"Location histograms", "⚖️ PP balancing"} & {
            t.strip() for t in titles
        }, f"{path}: a page that reads raw data was rendered in analyst mode"
        assert SENTINEL not in html and SENTINEL_LAT not in html
    nav = page.get_by_test_id("stSidebarNav")
    assert nav.get_by_text("DP SQL", exact=True).count() == 1  # its analyst view
    assert nav.get_by_text("Location histograms", exact=True).count() == 0
    assert nav.get_by_text("Releases", exact=True).count() == 1
    ids.append(_release_on_dp_sql_page(page, analyst_app_url, name))
    # the releases themselves are listed and their reports carry no raw value either
    page.goto(f"{analyst_app_url}/releases")
    for release_id in ids:
        page.get_by_text(f"#{release_id} · ").first.wait_for()
        with page.expect_download() as info:
            page.locator(f".st-key-report_{release_id} button").click()
        saved = tmp_path / f"r{release_id}.html"
        info.value.save_as(saved)
        text = saved.read_text(encoding="utf-8")
        assert f"Release #{release_id}" in text
        assert SENTINEL not in text and SENTINEL_LAT not in text
    assert external_requests == []
