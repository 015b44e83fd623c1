"""PP balancing in analyst mode (`DPX_MODE=analyst`): publish a registered table, see the release.

An analyst sees releases and public parameters only. Nothing computed from the raw table is shown
before publishing: no counts, SA distribution, Phase 1 steps, exact plan, evaluation. A
publication is a PP release (`core.balancing.publish`): its partition plan is made from DP-noised
counts (ε charged to the dataset) and it holds the SA plus the columns the data owner declared
publishable — the analyst cannot add one. After publishing, the page shows what the publication
itself holds: the published plan (from noisy counts), the estimated SA distribution computed from
the published table and its metadata alone, and the downloads (never the INTERNAL run report).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.balancing.names import STATED_LIMITS
from core.privacy import Noise
from ui.data import DataChoice
from ui.outcomes import ChargePlan, release_button, show_kept_outcome, user_errors
from ui.pp.inputs import PPSettings
from ui.pp.publication import analyst_publication, downloads, show_kept
from ui.pp.publish import kept_publication, prepared_of, publish_step, release_options
from ui.pp.request import PPPageRequest


def analyst_view(choice: DataChoice, df: pd.DataFrame, s: PPSettings) -> None:
    """Publish (recorded as a release of the registered dataset) and show the release.

    Privacy claim: ((ρ1, ρ2) per record) + (ε for the partition plan, unit: one record's SA
    value), ε charged to the dataset before the table is read. Nothing derived from the raw
    table is drawn except the publication and what is computed from it alone."""
    st.info(
        "Analyst mode: the exact partition of the registered table is not shown. A publication "
        "plans its sub-tables from noisy counts (ε charged to the dataset); you see the "
        "publication and its metadata only."
    )
    st.subheader("Publish")
    st.caption(" ".join(STATED_LIMITS))
    noise = Noise.secure()
    with user_errors():
        request = PPPageRequest.of(s, release_options(choice, df, s, None), noise)
        cost = prepared_of(choice, df, request).cost
    plan = ChargePlan.of(choice.registry, choice.dataset, cost.epsilon, cost.delta)
    if release_button("Publish (perturb)", plan, key="pp_publish"):
        publish_step(choice, df, request)
    show_kept_outcome("pp")
    p = kept_publication()
    if p is None:
        return
    if not p.request.same_table(request):  # another dataset or SA: not this one
        return
    show_kept(p, request)
    analyst_publication(p)
    downloads(p, plan=None)
