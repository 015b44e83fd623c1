"""The DP SQL page in a real browser: run the thesis example query, see the released table
and the ledger entry, and take the README screenshot."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

SCREENSHOT = "dp_sql.png"  # written by the `screenshot` fixture (a temp dir; `make screenshots`)


def test_run_example_query_shows_result_and_ledger(page, app_url, external_requests, screenshot):
    # open the app root first so st.navigation is registered before the sub-page session
    page.goto(app_url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.goto(f"{app_url}/dp_sql")
    page.get_by_role("heading", name="DP SQL").first.wait_for()
    editor = page.get_by_role("textbox", name="DP SQL", exact=True)
    editor.wait_for()
    assert "JOIN Orders O USING (uid)" in editor.input_value()

    page.get_by_role("tab", name="Run").click()
    page.get_by_role("button", name="Run query").click()
    page.get_by_text("Partitions released").first.wait_for()
    page.get_by_text("Ledger entries of this run").wait_for()
    grid = page.locator("[data-testid='stDataFrame']").filter(has_text="c ±95%").first
    grid.wait_for()
    assert grid.is_visible()

    page.get_by_role("tab", name="Ledger").click()
    page.get_by_text("Session budget: ε 1 of 10").first.wait_for(state="attached")
    page.get_by_role("tab", name="Run").click()
    grid.scroll_into_view_if_needed()
    shot = screenshot(page, SCREENSHOT)
    assert shot.stat().st_size > 10_000
    assert external_requests == [], f"requests left localhost: {external_requests}"
