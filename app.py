"""DP Explorer — Streamlit entry point: navigation, the shared noise-mode switch, and the
owner/analyst mode (`DPX_MODE`, see pages/mode.py)."""

from pathlib import Path

import streamlit as st

from pages.common import mode_sidebar
from pages.mode import is_analyst

st.set_page_config(
    page_title="DP Explorer",
    page_icon=str(Path(__file__).parent / "pages" / "icon.png"),
    layout="wide",
)

PAGES_DIR = Path(__file__).parent / "pages"

# Capability pages are listed as they arrive; a missing file simply is not shown yet.
CAPABILITY_PAGES = (
    ("location_histograms.py", "Location histograms", ":material/map:"),
    ("pp_balancing.py", "PP balancing", ":material/balance:"),
    ("dp_sql.py", "DP SQL", ":material/database:"),
    ("releases.py", "Releases", ":material/verified:"),
)

# Analyst mode fails closed: only pages that show nothing but releases and public parameters.
# Each capability page has an analyst view (registered datasets only): DP SQL without
# previews, Teaching tab or owner view; Location histograms without raw counts, evaluation,
# tuning or the teaching stepper; PP balancing without the plan computed from the raw table
# (only the publication). A new page is not offered to an analyst until it has such a view.
ANALYST_PAGES = ("releases.py", "dp_sql.py", "location_histograms.py", "pp_balancing.py")

pages = [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)]
pages += [
    st.Page(f"pages/{file}", title=title, icon=icon)
    for file, title, icon in CAPABILITY_PAGES
    if (PAGES_DIR / file).exists() and (not is_analyst() or file in ANALYST_PAGES)
]

if is_analyst():
    # Analyst mode (DPX_MODE=analyst): no seeded demo switch; every number shown must be a
    # release or a public parameter.
    st.sidebar.info("Analyst mode: registered datasets and their releases only.")
else:
    mode_sidebar()
st.navigation(pages).run()
