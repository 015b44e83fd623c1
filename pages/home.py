"""Home: what DP Explorer is, a card for every page (`ui.shell.PAGES`, Home excepted: a test
checks it), which role and noise mode are on, and the symbols every page uses (`ui.glossary`)."""

import streamlit as st

from ui.glossary import DELTA, EPSILON, MRE, RHO1, RHO2, show_glossary
from ui.noise import current_noise
from ui.shell import APP_DIR, LOCATION, PP, RELEASES, SQL, is_analyst, page_setup

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
        "longitude points and build a differentially private map of counts: **Recommended "
        "(private choice)**, the default, picks the most accurate method for your data from "
        "noisy features of it. Compare it with grids, trees, PrivTree and the paper's HTF, and "
        "step through how HTF cuts the map, depth by depth, on a demo dataset (no budget needed).",
        "Analyst mode: build location histograms of a registered points dataset (charged to its "
        "budget) and see them on the map.",
    ),
    (
        PP,
        "For teachers and data stewards. Pick a table's sensitive attribute and privacy levels "
        f"({RHO1.symbol}, {RHO2.symbol}), step through how the table is split into balanced sub-tables, see each "
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
    (
        RELEASES,
        f"For data owners and reviewers. Every release with what it spent ({EPSILON.symbol}, "
        f"{DELTA.symbol}), each dataset's remaining budget, a budget plan, and a report per "
        "release to download and share.",
        "Analyst mode: the releases of registered datasets, their budgets and a report per "
        "release.",
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

show_glossary(EPSILON, DELTA, RHO1, RHO2, MRE)
