"""The DP SQL page in a real browser, used the way a class uses it: run the thesis example,
then change a widget, click every download, toggle demo mode, navigate away and back, reload,
a second browser with the same query, bad uploads — never an exception on screen, results still
there (or labelled as earlier ones). Every request that would leave localhost is blocked."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from tests.e2e.conftest import bad_upload_cases, two_sessions, upload_bad_file
from tests.e2e.waiting import wait_idle as _wait_idle

pytestmark = pytest.mark.browser

SCREENSHOT = "dp_sql.png"  # written by the `screenshot` fixture (a temp dir; `make screenshots`)
EARLIER = "Earlier result"


def _open(page, url: str) -> None:
    # open the app root first so st.navigation is registered before the sub-page session
    page.goto(url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.goto(f"{url}/dp_sql")
    page.get_by_role("heading", name="DP SQL").first.wait_for()
    page.get_by_role("tab", name="Run").wait_for(timeout=120_000)


def _result_grid(page):
    return page.locator("[data-testid='stDataFrame']").filter(has_text="c ±95%").first


def _run(page) -> None:
    page.get_by_role("tab", name="Run").click()
    page.get_by_role("button", name="Run query").click()
    _wait_results(page)


def _wait_results(page) -> None:
    page.get_by_role("tab", name="Run").click()
    page.get_by_text("Partitions released").first.wait_for(timeout=120_000)
    page.get_by_text("Ledger entries of this run").wait_for()
    _result_grid(page).wait_for()


def _toggle_demo_mode(page) -> None:
    page.get_by_test_id("stSidebar").get_by_text("Reproducible demo mode", exact=True).click()
    _wait_idle(page)


def _download(page, label: str) -> tuple[str, bytes]:
    _wait_idle(page)  # a click during a rerun can land on a button the rerun then replaces
    with page.expect_download() as info:
        page.get_by_role("button", name=label, exact=True).click()
    _wait_idle(page)
    return info.value.suggested_filename, Path(info.value.path()).read_bytes()


def test_run_then_use_the_page_like_a_class(page, app_url, external_requests, no_exception):
    _open(page, app_url)
    editor = page.get_by_role("textbox", name="DP SQL", exact=True)
    editor.wait_for()
    _wait_idle(page)
    query = editor.input_value()
    assert "JOIN Orders O USING (uid)" in query
    _run(page)
    no_exception(page)

    # change a widget (the transpile dialect): the released rows stay, unlabelled
    page.get_by_role("tab", name="Explain").click()
    page.get_by_role("combobox", name="Transpile to").click()
    page.get_by_role("option", name="spark").first.click()
    _wait_idle(page)
    no_exception(page)
    _wait_results(page)
    assert page.get_by_text(EARLIER).count() == 0

    # click every download: each file is complete and parses
    page.get_by_role("tab", name="Explain").click()
    page.get_by_text("Export to BigQuery syntax").click()
    name, data = _download(page, "Download .sql")
    assert name.endswith(".sql") and b"DIFFERENTIAL_PRIVACY" in data.upper()
    page.get_by_role("tab", name="Ledger").click()
    name, data = _download(page, "Recorded runs (CSV)")
    assert name.endswith(".csv") and len(pd.read_csv(io.BytesIO(data))) > 0
    no_exception(page)
    _wait_results(page)

    # demo mode on: the secure result stays but is labelled earlier; off again: unlabelled
    _toggle_demo_mode(page)
    no_exception(page)
    page.get_by_role("tab", name="Run").click()
    page.get_by_text(EARLIER).first.wait_for()
    _toggle_demo_mode(page)
    no_exception(page)
    _wait_results(page)
    assert page.get_by_text(EARLIER).count() == 0

    # navigate Home and back: the query and the released rows are still there
    page.get_by_test_id("stSidebarNav").get_by_text("Home", exact=True).click()
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.get_by_test_id("stSidebarNav").get_by_text("DP SQL", exact=True).click()
    page.get_by_role("heading", name="DP SQL").first.wait_for()
    _wait_idle(page)  # the page's first run after navigating back must finish first
    assert page.get_by_role("textbox", name="DP SQL", exact=True).input_value() == query
    _wait_results(page)
    no_exception(page)

    # reload (a new session) and run the same query again
    page.reload()
    page.get_by_role("heading", name="DP SQL").first.wait_for()
    _run(page)
    no_exception(page)
    assert external_requests == [], f"requests left localhost: {external_requests}"


def test_second_browser_with_the_same_query(browser, app_url, no_exception):
    """Two students run the default example at the same time: neither sees an exception."""
    with two_sessions(browser) as pages:
        for pg in pages:
            _open(pg, app_url)
        for pg in pages:
            _run(pg)
        for pg in pages:
            no_exception(pg)
            _wait_results(pg)


@pytest.mark.parametrize(("name", "payload", "message"), bad_upload_cases(b"uid,x\n", b"1,2\n"))
def test_bad_upload_says_so_and_releases_nothing(
    page, small_upload_app_url, external_requests, no_exception, name, payload, message
):
    _open(page, small_upload_app_url)
    upload_bad_file(page, "Upload CSV/Parquet", name, payload, message)
    _wait_idle(page)
    no_exception(page)
    assert page.get_by_role("button", name="Run query").count() == 0
    assert page.get_by_text("Partitions released").count() == 0
    assert external_requests == []


def test_screenshot(page, app_url, screenshot):
    _open(page, app_url)
    _run(page)
    _result_grid(page).scroll_into_view_if_needed()
    shot = screenshot(page, SCREENSHOT)
    assert shot.stat().st_size > 10_000
