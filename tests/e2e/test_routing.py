"""A first visitor who opens a page URL directly still gets the app shell (navigation, mode
switch): `ui.shell.page_setup` leaves Streamlit's folder mode with the public `st.navigation`
(no patch of Streamlit internals)."""

import pytest

pytestmark = pytest.mark.browser


def test_first_visit_to_a_subpage_runs_through_app_navigation(
    page, fresh_app_url, external_requests
):
    page.goto(f"{fresh_app_url}/pp_balancing")
    page.get_by_role("heading", name="PP balancing").first.wait_for()
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Reproducible demo mode").wait_for()
    nav = page.get_by_test_id("stSidebarNav")
    assert nav.get_by_text("Home", exact=True).count() == 1
    # Streamlit's folder routing would list the folder's file names (pp_balancing, dp_sql)
    assert nav.get_by_text("pp_balancing", exact=True).count() == 0
    assert external_requests == []
