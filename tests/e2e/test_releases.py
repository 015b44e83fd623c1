"""Browser tests: a release report opens offline from file:// with its figures; the Releases
page shows the registry's budget and hands out the same report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from core.cli import main
from tests.e2e.waiting import wait_idle as _wait_idle
from tests.registry.helpers import BBOX, QUERY, write_points

pytestmark = pytest.mark.browser


def _run(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_report_opens_offline_with_its_figures(browser, capsys, registry_dir, tmp_path):
    points = write_points(tmp_path / "pts.csv")
    _run(
        capsys,
        ["dataset", "add", "pts", "--table", f"t={points}", "--uid", "uid", "--epsilon", "2"],
    )
    htf = _run(
        capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )
    report = tmp_path / "report.html"
    _run(capsys, ["report", str(htf["registry"]["release_id"]), "--out", str(report)])

    context = browser.new_context(offline=True)
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.goto(report.as_uri())
    leaves = page.locator("svg.leaves-map rect.leaf")  # the background and legend are rects too
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
    _run(
        capsys, ["dataset", "add", name, "--table", f"t={points}", "--uid", "uid", "--epsilon", "4"]
    )
    out = _run(
        capsys, ["htf", "--dataset", name, "--max-points-per-person", "1", BBOX, "--epsilon", "1"]
    )
    release_id = out["registry"]["release_id"]

    page.goto(f"{app_url}/releases")
    page.get_by_role("heading", name="Releases").first.wait_for()
    page.get_by_text("ε spent 1 of 4 (remaining 3)").first.wait_for()
    row = page.get_by_text(f"#{release_id} · location · htf · {name}").first
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
    budget moves from 2 to 3 in the registry, and no tab shows the sentinel."""
    from core.registry import Registry

    registry = Registry()
    assert registry.spent(name)[0] == 2.0
    page.goto(f"{url}/dp_sql")
    page.get_by_role("heading", name="DP SQL").first.wait_for()
    assert page.locator(".st-key-dpsql_source").get_by_text("Upload").count() == 0
    _pick_option(page, "Registered dataset", name)
    page.get_by_text(f"Budget of dataset {name}").first.wait_for()
    area = page.locator(".st-key-dpsql_query textarea")
    area.fill(QUERY.format(eps=1))
    area.press("Control+Enter")
    page.get_by_role("tab", name="Run").click()
    page.locator(".st-key-dpsql_run button").click()
    page.get_by_text("Partitions released").first.wait_for()
    assert registry.spent(name)[0] == 3.0  # the registry's budget, charged from the page
    assert page.get_by_role("tab", name="Teaching").count() == 0
    page.get_by_role("tab", name="Ledger").click()
    page.get_by_text(f"spent ε = 3 of {BUDGET:g}").first.wait_for()
    html = page.content()
    assert SENTINEL not in html and SENTINEL_LAT not in html
    (last,) = [r for r in registry.releases(name) if r.params.get("via") == "app"]
    return last.id


SENTINEL = "ZQX-SENTINEL-4417"
SENTINEL_LAT = "34.0123456789"
BUDGET = 10.0
LOCATION_METHODS = 1  # the location page's default: Recommended alone, at its default ε 0.5
PP_COLUMNS = "lon"  # the owner declares this column publishable beside PP's SA; nothing else


def _no_sentinel(page, where: str) -> None:
    """Neither planted value is in the page's DOM nor in any of its frames (maps, components)."""
    for frame in page.frames:
        try:
            html = frame.content()
        except Exception:  # noqa: BLE001 - a frame that went away while we looked
            continue
        assert SENTINEL not in html and SENTINEL_LAT not in html, f"{where}: raw value shown"


def _pick_option(page, label: str, option: str) -> None:
    """Choose the option containing `option` in the selectbox labelled `label` (retried: a late
    re-layout can close the list before the click)."""
    box = page.get_by_role("combobox", name=label)
    item = page.get_by_role("option", name=option)
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


def _pick_report(page, release_id: int) -> None:
    """Choose release `release_id` in the Releases page's report picker (typed, so a long list
    need not be scrolled; retried as `_pick_option`)."""
    box = page.get_by_role("combobox", name="Release")
    item = page.get_by_role("option", name=f"#{release_id} · ")
    for _ in range(5):
        box.click()
        page.keyboard.type(f"#{release_id} · ")
        try:
            item.first.click(timeout=5000)
        except Exception:  # noqa: BLE001 - the list closed before the click: open it again
            page.keyboard.press("Escape")
            continue
        _wait_idle(page)
        if page.locator(f".st-key-report_{release_id} button").count() == 1:
            return
    raise AssertionError(f"could not choose release #{release_id}")


def _release_on_location_page(page, url: str, name: str) -> list[int]:
    """Analyst mode: build the default methods' releases of `name` on the location page; each is
    charged to the registry (3 -> 6.5), the map draws, and nothing shows a raw value."""
    from core.registry import Registry

    registry = Registry()
    before = registry.spent(name)[0]
    page.goto(f"{url}/location_histograms")
    page.get_by_role("heading", name="Location histograms").first.wait_for()
    assert page.locator(".st-key-lh_source").get_by_text("Upload").count() == 0
    _pick_option(page, "Registered dataset", name)
    page.get_by_text(f"Budget of dataset {name}").first.wait_for()
    grid = page.get_by_test_id("stMain").get_by_role("slider").first  # the page's only slider
    for _ in range(10):  # 64 x 64: quick (retried: a rerun can swallow a key press)
        if grid.get_attribute("aria-valuetext") == "64":
            break
        grid.focus()
        grid.press("Home")
        page.wait_for_timeout(500)
    _wait_idle(page)
    _pick_option(page, "Bounding box", "Los Angeles")
    page.get_by_text("Build releases charges").first.wait_for()
    assert grid.get_attribute("aria-valuetext") == "64"
    assert page.get_by_text("data owner only").count() == 0  # no counts of raw points
    page.get_by_role("button", name="Build releases", exact=True).click()
    page.get_by_role("heading", name="Charged releases").wait_for(timeout=300_000)
    page.locator("iframe[title*='streamlit_folium']").first.wait_for(timeout=120_000)
    page.get_by_text(f"Charged to dataset {name}").first.wait_for()
    _wait_idle(page)
    assert registry.spent(name)[0] == before + LOCATION_METHODS * 0.5
    page.get_by_text(f"ε spent {before + LOCATION_METHODS * 0.5:g} of").first.wait_for()
    assert page.get_by_role("button", name="Evaluate", exact=False).count() == 0
    assert page.get_by_text("step by step").count() == 0 and page.get_by_text("Tuning").count() == 0
    _no_sentinel(page, "location page")
    built = [r for r in registry.releases(name) if r.params.get("via") == "app" and
             r.tool != "sql"]  # fmt: skip
    assert len(built) == LOCATION_METHODS
    assert all(r.params["rows"] == 64 and r.params["cols"] in (None, 64) for r in built)
    return [r.id for r in built]


def _publish_on_pp_page(page, url: str, name: str, tmp_path: Path) -> int:
    """Analyst mode: publish column `grade` of `name` with PP; recorded as a release (the
    partition plan's ε).
    The analyst cannot add a column: the published CSV holds the SA, the sub-table id and the
    declared column `lon` only — neither planted value (in `category` and `lat`, not declared)
    is in it, nor in the page."""
    from core.registry import Registry

    registry = Registry()
    page.goto(f"{url}/pp_balancing")
    page.get_by_role("heading", name="PP balancing").first.wait_for()
    _pick_option(page, "Registered dataset", name)
    _pick_option(page, "Sensitive attribute (SA) column", "grade")
    page.locator(".st-key-pp_missing").get_by_text("drop those records").click()
    _wait_idle(page)
    assert page.get_by_text("Columns to publish").count() == 0  # no widget to add a column
    page.get_by_text("declared publishable: lon").first.wait_for()
    page.get_by_role("button", name="Publish (perturb)").click()
    csv_button = page.get_by_role("button", name="Published CSV", exact=True)
    csv_button.wait_for(timeout=120_000)
    _wait_idle(page)
    assert page.get_by_role("button", name="Run report (INTERNAL)").count() == 0
    _no_sentinel(page, "PP page")
    for button in ("Published CSV", "Sub-table metadata"):
        with page.expect_download() as info:
            page.get_by_role("button", name=button, exact=True).click()
        saved = tmp_path / f"pp-{button[:3]}.download"
        info.value.save_as(saved)
        text = saved.read_text(encoding="utf-8")
        assert SENTINEL not in text and SENTINEL_LAT not in text, f"{button}: raw value"
        if button == "Published CSV":  # the SA, the sub-table id and the declared column only
            assert set(text.splitlines()[0].split(",")) == {"lon", "grade", "subtable"}
    (pub,) = [r for r in registry.releases(name) if r.tool == "pp"]
    assert pub.epsilon == 1.0 and pub.params["role"] == "analyst"  # the plan's ε (issue 16)
    assert pub.params["columns"] == ["lon", "grade"]  # the declared column and the SA
    return pub.id


def _points_with_sentinel(path: Path) -> Path:
    """write_points + a `grade` column (a 50%, b 30%, c 20%), and one planted row: a unique
    category `SENTINEL` and a unique latitude `SENTINEL_LAT`."""
    lines = write_points(path).read_text().splitlines()
    grade = lambda i: "a" if i % 10 < 5 else ("b" if i % 10 < 8 else "c")  # noqa: E731
    rows = [lines[0] + ",grade"] + [f"{x},{grade(i)}" for i, x in enumerate(lines[1:])]
    rows.append(f"999999,{SENTINEL_LAT},-118.2,{SENTINEL},a")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.fixture
def analyst_app_url(monkeypatch):
    """A server started with DPX_MODE=analyst (the environment is inherited); this test process
    stays the owner (it registers the dataset with `dpx dataset add`)."""
    from tests.e2e.conftest import serve_app

    monkeypatch.setenv("DPX_MODE", "analyst")
    with serve_app() as url:
        monkeypatch.delenv("DPX_MODE")
        yield url


def test_analyst_mode_never_shows_a_raw_value(
    page, analyst_app_url, external_requests, capsys, tmp_path
):
    points = _points_with_sentinel(tmp_path / "pts.csv")
    name = f"sentinel-{tmp_path.name[-10:]}"
    _run(capsys, ["dataset", "add", name, "--table", f"t={points}", "--uid", "uid",
                  "--epsilon", f"{BUDGET:g}", "--delta", "1e-5",
                  "--pp-columns", PP_COLUMNS])  # fmt: skip
    ids = [
        _run(
            capsys,
            ["htf", "--dataset", name, "--max-points-per-person", "1", BBOX, "--epsilon", "1"],
        )["registry"]["release_id"],
        _run(capsys, ["sql", "--dataset", name, "--query", QUERY.format(eps=1)])["registry"][
            "release_id"
        ],
    ]
    for path in ("", "/releases", "/dp_sql", "/location_histograms", "/pp_balancing"):
        page.goto(f"{analyst_app_url}{path}")
        page.get_by_test_id("stSidebar").get_by_text("Analyst mode").wait_for()
        page.locator("h1").first.wait_for()  # the page rendered (in analyst mode)
        page.wait_for_timeout(1500)  # let it finish rendering
        _wait_idle(page)
        _no_sentinel(page, path or "/")
    nav = page.get_by_test_id("stSidebarNav")
    for title in ("DP SQL", "Location histograms", "PP balancing", "Releases"):
        assert nav.get_by_text(title, exact=True).count() == 1  # each page's analyst view
    ids.append(_release_on_dp_sql_page(page, analyst_app_url, name))
    ids += _release_on_location_page(page, analyst_app_url, name)[:2]
    ids.append(_publish_on_pp_page(page, analyst_app_url, name, tmp_path))
    # the releases themselves are listed and their reports carry no raw value either
    page.goto(f"{analyst_app_url}/releases")
    page.get_by_role("heading", name="Reports").wait_for(timeout=120_000)
    _wait_idle(page)
    for release_id in ids:  # the picker builds the chosen release's report only
        _pick_report(page, release_id)
        with page.expect_download() as info:
            page.locator(f".st-key-report_{release_id} button").click()
        saved = tmp_path / f"r{release_id}.html"
        info.value.save_as(saved)
        text = saved.read_text(encoding="utf-8")
        assert f"Release #{release_id}" in text
        assert SENTINEL not in text and SENTINEL_LAT not in text
    _no_sentinel(page, "/releases")
    assert external_requests == []
