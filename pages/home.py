"""Home: what DP Explorer is, who each tool is for, and which noise mode is on."""

from pathlib import Path

import streamlit as st

from pages.common import current_noise
from pages.mode import is_analyst

st.title("DP Explorer")
st.write(
    "See privacy algorithms work on real data. Each tool takes your data (or a demo dataset), "
    "applies a published privacy algorithm step by step, and shows what is released, how much "
    "privacy budget it spends, and how accurate the result is."
)

noise = current_noise()
if noise.is_secure:
    st.info(
        "**Mode: secure.** Noise comes from OpenDP's samplers with OS entropy and is never seeded."
    )
else:
    st.warning(f"**Mode: reproducible demo (seed {noise.seed}).** {noise.label}.")

APP_DIR = Path(__file__).resolve().parents[1]

TOOLS = (
    (
        "pages/location_histograms.py",
        ":material/map: Location histograms",
        "For privacy officers and analysts publishing where things happen. Upload latitude/longitude "
        "points and build a differentially private histogram with the Homogeneous Tree Framework (HTF). "
        "See its partitions on a map and compare its accuracy with kd-tree, grid, quadtree and PrivTree.",
    ),
    (
        "pages/pp_balancing.py",
        ":material/balance: PP balancing",
        "For teachers and data stewards. Pick a table's sensitive attribute and privacy levels (ρ1, ρ2), "
        "step through how the table is split into balanced sub-tables, see each sub-table's retention "
        "probability, and publish a randomized table.",
    ),
    (
        "pages/dp_sql.py",
        ":material/database: DP SQL",
        "For analysts and reviewers. Write `SELECT WITH DIFFERENTIAL_PRIVACY` queries, see how they are "
        "rewritten (per-user aggregation, contribution bounds, clamping), and release noisy answers with "
        "95% intervals under a budget ledger.",
    ),
)

for path, title, text in TOOLS:
    with st.container(border=True):
        st.subheader(title)
        st.write(text)
        if is_analyst():  # analyst mode (pages/mode.py): these pages are not offered
            st.caption("Not available in analyst mode: see the Releases page.")
        elif (APP_DIR / path).exists():
            st.page_link(path, label=f"Open {title.split(' ', 1)[1]}")
        else:
            st.caption("Not part of this build yet.")
