"""Home: what DP Explorer is, who each tool is for, which role and noise mode are on."""

import streamlit as st

from ui.noise import current_noise
from ui.shell import APP_DIR, LOCATION, PP, SQL, is_analyst, page_setup

page_setup()
st.title("DP Explorer")
st.write(
    "See privacy algorithms work on real data. Each tool takes your data (or a demo dataset), "
    "applies a published privacy algorithm step by step, and shows what is released, how much "
    "privacy budget it spends, and how accurate the result is."
)

noise = current_noise()
if is_analyst():
    st.info(
        "**Analyst mode.** All three tools work on the datasets the data owner registered: you "
        "see releases and public parameters only, every release is charged to its dataset's "
        "budget (each button says what it will charge before you press it), and noise is "
        "always secure. The Releases page lists every release with its report."
    )
elif noise.is_secure:
    st.info(
        "**Mode: secure.** Noise comes from OpenDP's samplers with OS entropy and is never seeded."
    )
else:
    st.warning(f"**Mode: reproducible demo (seed {noise.seed}).** {noise.label}.")

TOOLS = (
    (
        LOCATION,
        "For privacy officers and analysts publishing where things happen. Upload latitude/"
        "longitude points and build a differentially private histogram with the Homogeneous Tree "
        "Framework (HTF). See its partitions on a map and compare its accuracy with kd-tree, "
        "grid, quadtree and PrivTree.",
        "Analyst mode: build location histograms of a registered points dataset (charged to its "
        "budget) and see them on the map.",
    ),
    (
        PP,
        "For teachers and data stewards. Pick a table's sensitive attribute and privacy levels "
        "(ρ1, ρ2), step through how the table is split into balanced sub-tables, see each "
        "sub-table's retention probability, and publish a randomized table.",
        "Analyst mode: publish a registered table's sensitive attribute, randomized, with the "
        "columns its owner declared publishable.",
    ),
    (
        SQL,
        "For analysts and reviewers. Write `SELECT WITH DIFFERENTIAL_PRIVACY` queries, see how "
        "they are rewritten (per-user aggregation, contribution bounds, clamping), and release "
        "noisy answers with 95% intervals under a budget ledger.",
        "Analyst mode: query a registered dataset; see the rewrite, and release noisy answers "
        "with 95% intervals, charged to its budget.",
    ),
)

for spec, owner_text, analyst_text in TOOLS:
    with st.container(border=True):
        st.subheader(f"{spec.icon} {spec.title}")
        st.write(analyst_text if is_analyst() else owner_text)
        if (APP_DIR / spec.file).exists():
            st.page_link(spec.file, label=f"Open {spec.title}")
        else:
            st.caption("Not part of this build yet.")
