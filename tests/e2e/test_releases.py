"""Browser tests: a release report opens offline from file:// with its figures; the Releases
page shows the registry's budget and hands out the same report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.cli import main
from tests.registry.helpers import BBOX, write_points

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
