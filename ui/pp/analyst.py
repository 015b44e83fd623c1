"""PP balancing in analyst mode (`DPX_MODE=analyst`): publish a registered table, see the release.

An analyst sees releases and public parameters only. The partition plan is computed from the raw
table, so none of it is shown before publishing: no counts, SA distribution, Phase 1 steps,
T'' distribution, sub-table table, notes or evaluation against the raw data. After publishing,
the page shows what the publication itself holds and no more: the estimated SA distribution
computed from the published table and its metadata alone, and the downloads of the published
CSV and its metadata (never the INTERNAL run report). The published table's rows are offered
as a download, not drawn on the page. The published columns are the SA and those the data
owner declared (`ui.pp.publish.publishable_columns`); an analyst cannot add one.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.balancing.plan import STATUS_NOTHING, PartitionPlan
from core.balancing.publish import STATED_LIMITS
from core.privacy import Noise
from ui.data import DataChoice
from ui.outcomes import ChargePlan, release_button, show_kept_outcome
from ui.pp.inputs import PPSettings
from ui.pp.publication import analyst_publication, downloads, show_kept
from ui.pp.publish import kept_publication, publish_step, publishable_columns


def analyst_view(choice: DataChoice, df: pd.DataFrame, plan: PartitionPlan, s: PPSettings):
    """Publish (recorded as a release of the registered dataset) and show the release.

    Privacy claim: the publication is (ρ1, ρ2)-private per record for the SA (PP balancing),
    not ε-DP; recorded in the registry with no ε charged. Nothing derived from the raw table is
    drawn except the publication and what is computed from it alone."""
    st.info(
        "Analyst mode: the partition is computed from the registered table and is not shown; "
        "you see the publication (the release) and its metadata only."
    )
    if plan.status == STATUS_NOTHING:
        st.warning("PP does not run with these parameters: nothing needs protection. Lower ρ1.")
        st.stop()
    accept_fallback = False
    if plan.refused:
        st.error(
            "PP cannot keep every posterior ≤ ρ2 with sub-tables for these parameters. Raise ρ2, "
            "or accept the single-table fallback (the whole table as one sub-table)."
        )
        accept_fallback = st.checkbox("Accept the single-table fallback", key="pp_accept_fallback")
        if not accept_fallback:
            st.stop()
    st.subheader("Publish")
    st.caption(" ".join(STATED_LIMITS))
    columns = publishable_columns(choice, df, s.sa)
    plan_text = ChargePlan.of(
        choice.registry, choice.dataset, 0.0,
        note="A (ρ1, ρ2) publication: no ε is charged; it is recorded as a release.",
    )  # fmt: skip
    if release_button("Publish (perturb)", plan_text, key="pp_publish"):
        publish_step(choice, df, plan, s, columns, accept_fallback, Noise.secure())
    show_kept_outcome("pp")
    p = kept_publication()
    if p is None:
        return
    show_kept(p, (s, columns, accept_fallback, Noise.secure().describe()))
    analyst_publication(p)
    downloads(p, plan=None)
