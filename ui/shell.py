"""The app shell every page runs in: the page list, the role, the sidebar, the session, and the
notice shown when the connection to the server is lost.

`app.py` calls `run_app()`. Every page calls `page_setup()` first: on a fresh server Streamlit
runs a page URL opened directly without `app.py` (its legacy mode for a `pages/` folder, left
only when `st.navigation` is called); `page_setup` then declares the app's navigation with the
public `st.navigation` and reruns, so the page comes back inside the shell. No Streamlit
internals are touched.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core.governance import Role, current_role
from ui import state
from ui.budget import reset_budget_lines
from ui.noise import mode_sidebar

APP_DIR = Path(__file__).resolve().parents[1]
APP_FILE = APP_DIR / "app.py"
_RUN = threading.local()  # one script thread per session: marks a run that went through app.py


@dataclass(frozen=True)
class PageSpec:
    file: str  # relative to the app directory
    title: str
    icon: str
    default: bool = False


HOME = PageSpec("pages/home.py", "Home", ":material/home:", default=True)
LOCATION = PageSpec("pages/location_histograms.py", "Location histograms", ":material/map:")
PP = PageSpec("pages/pp_balancing.py", "PP balancing", ":material/balance:")
SQL = PageSpec("pages/dp_sql.py", "DP SQL", ":material/database:")
RELEASES = PageSpec("pages/releases.py", "Releases", ":material/verified:")
# Every page has an analyst view (registered datasets only, releases and public parameters):
# DP SQL without previews or Teaching tab; Location histograms without raw counts, evaluation,
# tuning or the stepper; PP balancing with the publication only. A new page must have one
# before it is listed here.
PAGES = (HOME, LOCATION, PP, SQL, RELEASES)

# Shown over everything while the browser has no connection to the server: Streamlit marks its
# app element with the connection state (`data-test-connection-state`) and draws a small
# `stConnectionStatus` — but not while a script run was under way, when it keeps saying
# "Running…". Delayed so a first page load does not flash it.
CONNECTION_CSS = """
<style>
body:has([data-test-connection-state]:not([data-test-connection-state="CONNECTED"])
         :not([data-test-connection-state="STATIC_CONNECTED"]))::before,
body:has([data-testid="stConnectionStatus"])::before {
  content: "Connection to the server lost — nothing on this page is up to date, and a button "
           "pressed now does nothing. Wait for it to reconnect, or reload the page (your "
           "session's work is kept on the server).";
  position: fixed; top: 0; left: 0; right: 0; z-index: 1000001;
  padding: 0.9rem 1.2rem; background: #b00020; color: #fff; font-weight: 600;
  font-size: 1.05rem; text-align: center; opacity: 0;
  animation: dpx-connection-lost 0s linear 1.5s forwards;
}
@keyframes dpx-connection-lost { to { opacity: 1; } }
</style>
"""


def role() -> Role:
    """The app's role: `DPX_MODE`, the same variable as the CLI; unknown values are analyst."""
    return current_role()


def is_analyst() -> bool:
    return role() is Role.ANALYST


def app_pages(icons: bool = True) -> list:
    """The pages of the app (`st.Page`), in order; a missing file is not listed."""
    return [
        st.Page(p.file, title=p.title, icon=p.icon if icons else None, default=p.default)
        for p in PAGES
        if (APP_DIR / p.file).exists()
    ]


def _page_config() -> None:
    st.set_page_config(
        page_title="DP Explorer", page_icon=str(APP_DIR / "pages" / "icon.png"), layout="wide"
    )


def run_app() -> None:
    """The whole app: page config, the session, the sidebar, navigation and the page."""
    _page_config()
    _RUN.active = True
    try:
        state.start()
        st.html(CONNECTION_CSS)
        if is_analyst():
            # no seeded demo switch; every number shown must be a release or a public parameter
            st.sidebar.info("Analyst mode: registered datasets and their releases only.")
        else:
            mode_sidebar()
        page = st.navigation(app_pages())
        try:
            page.run()
        finally:
            state.save_widgets()
    finally:
        _RUN.active = False


def page_setup() -> None:
    """First call of every page: run inside the app shell, with the session started."""
    if not getattr(_RUN, "active", False) and _served_by_app():
        _page_config()  # the app's own icon: a page's material icon would be fetched online
        st.navigation(app_pages(icons=False), position="hidden")  # leaves the folder mode
        st.rerun()  # the rerun goes through app.py, to the same page
    reset_budget_lines()
    state.start()
    state.save_widgets()  # the previous run's values (the app shell saves again after the page)
    show_restore_notes()


def show_restore_notes() -> None:
    """Say plainly what a reload could not bring back (until the person dismisses it)."""
    notes = state.restore_notes()
    if not notes:
        return
    with st.container(border=True):
        for note in notes:
            st.warning(note)
        if st.button("Dismiss", key="dpx_restore_notes_dismiss"):
            state.clear_restore_notes()
            st.rerun()


def _served_by_app() -> bool:
    """True under `streamlit run app.py` (Streamlit sets sys.argv[0] to the main script); False
    when a test runs a page file as its own script."""
    try:
        return Path(sys.argv[0]).resolve() == APP_FILE
    except (IndexError, OSError):
        return False
