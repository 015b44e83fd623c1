"""DP Explorer — Streamlit entry point: navigation and the shared noise-mode switch."""

from pathlib import Path

import streamlit as st

from pages.common import mode_sidebar

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
)

pages = [st.Page("pages/home.py", title="Home", icon=":material/home:", default=True)]
pages += [
    st.Page(f"pages/{file}", title=title, icon=icon)
    for file, title, icon in CAPABILITY_PAGES
    if (PAGES_DIR / file).exists()
]

mode_sidebar()
st.navigation(pages).run()
