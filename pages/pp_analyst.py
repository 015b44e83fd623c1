"""PP balancing in analyst mode (`DPX_MODE=analyst`): publish a registered table, see the release.

An analyst sees releases and public parameters only. The partition plan is computed from the raw
table, so none of it is shown before publishing: no counts, SA distribution, Phase 1 steps,
T'' distribution, sub-table table, notes or evaluation against the raw data. After publishing,
the page shows what the publication itself holds and no more: the estimated SA distribution
computed from the published table and its metadata alone, and the downloads of the published
CSV and its metadata (never the INTERNAL run report). The published table's rows are offered
as a download, not drawn on the page.

What PP publishes by design (spec pp.md) is not hidden: the SA domain of each sub-table (in the
metadata) and every column that is not dropped, unchanged. Drop direct identifiers and any
column that must not leave — PP is (ρ1, ρ2)-privacy of the SA, not ε-DP.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.balancing.estimate import estimate_distribution
from core.balancing.plan import STATUS_NOTHING, PartitionPlan
from core.balancing.publish import STATED_LIMITS, SUBTABLE_COLUMN, publish, published_name
from core.privacy import Noise
from core.registry import Dataset, Registry
from pages.common import user_errors
from pages.pp_publish import publish_recorded, recorded_text

PUBLICATION = "pp_analyst_publication"


def analyst_view(
    df: pd.DataFrame,
    sa: str,
    plan: PartitionPlan,
    registry: Registry,
    dataset: Dataset,
    settings: dict,
) -> None:
    """Publish (recorded as a release of `dataset`) and show the release; secure noise only.

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
    others = [c for c in map(str, df.columns) if c != sa]
    drop = st.multiselect(
        "Columns to remove (direct identifiers and anything that must not be published — the "
        "others are published unchanged)",
        others,
        default=others,
        key="pp_analyst_drop",
    )
    noise = Noise.secure()
    key = (settings["data"], sa, settings["rho1"], settings["rho2"], tuple(drop), accept_fallback)
    if st.button("Publish (perturb)", key="pp_publish", type="primary"):
        st.session_state.pop(PUBLICATION, None)
        with user_errors():
            params = {**settings, "drop": list(drop), "accept_fallback": accept_fallback,
                      "noise": noise.mode, "via": "app", "mode": "analyst"}  # fmt: skip
            release, pub = publish_recorded(
                registry, dataset.name, (settings["rho1"], settings["rho2"]), params,
                lambda: publish(
                    df, sa, plan, noise, accept_fallback=accept_fallback,
                    missing=settings["missing"], drop_columns=drop,
                    record_order=settings["record_order"],
                ),
            )  # fmt: skip
            st.session_state[PUBLICATION] = (key, pub, recorded_text(release))
    stored = st.session_state.get(PUBLICATION)
    if stored is None:
        return
    made_with, pub, recorded = stored
    if made_with != key:
        st.warning("Earlier publication — made with other settings than the ones above.")
    st.info(recorded)
    show_publication(pub, sa)


def show_publication(pub, sa: str) -> None:
    """Released values only: estimates from the published table + metadata, and downloads."""
    published = pub.table
    meta = pub.metadata
    est = estimate_distribution(published, sa, SUBTABLE_COLUMN, meta["subtables"])
    st.markdown(
        f"**Published:** {len(published):,} rows, columns {', '.join(map(str, published.columns))}; "
        f"{len(meta['subtables'])} sub-table(s)."
    )
    st.caption(
        "Estimated SA distribution, computed from the published table and its metadata only "
        "(95% intervals)."
    )
    st.dataframe(
        pd.DataFrame(
            [
                {"SA value": e.value, "estimate": float(e.estimate), "± 95%": e.half_width}
                for e in est
            ]
        ),
        hide_index=True,
        key="pp_analyst_estimates",
    )
    csv_name = published_name("pp_published.csv", Noise.secure())
    d1, d2 = st.columns(2)
    d1.download_button(
        "Published CSV", published.to_csv(index=False), csv_name.name, "text/csv",
        key="pp_dl_csv",
        on_click="ignore",
    )  # fmt: skip
    d2.download_button(
        "Sub-table metadata", json.dumps(meta, indent=2),
        csv_name.with_suffix(".metadata.json").name, "application/json", key="pp_dl_meta",
        on_click="ignore",
    )  # fmt: skip
