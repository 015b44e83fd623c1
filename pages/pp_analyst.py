"""PP balancing in analyst mode (`DPX_MODE=analyst`): publish a registered table, see the release.

An analyst sees releases and public parameters only. Nothing computed from the raw table is shown
before publishing: no counts, SA distribution, Phase 1 steps, exact plan, evaluation. A
publication is a PP release (`core.balancing.publish`): its partition plan is made from DP-noised
counts (ε charged to the dataset) and it holds the SA plus the columns the data owner declared
publishable - the analyst cannot add one. After publishing, the page shows what the publication
itself holds: the published plan (from noisy counts), the estimated SA distribution computed from
the published table and its metadata alone, and the downloads (never the INTERNAL run report).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.balancing.columns import published_columns
from core.balancing.estimate import estimate_distribution
from core.balancing.names import STATED_LIMITS, SUBTABLE_COLUMN, published_name
from core.balancing.publish import Publication, publish
from core.balancing.release import DEFAULT_PLAN_EPSILON, ReleaseSettings
from core.privacy import Accountant, Noise
from core.registry import Dataset, Registry
from pages.common import user_errors
from pages.pp_publish import publish_recorded, recorded_text

PUBLICATION = "pp_analyst_publication"


def analyst_view(
    df: pd.DataFrame,
    sa: str,
    registry: Registry,
    dataset: Dataset,
    settings: dict,
    declared: Sequence[str] = (),
    categories: Sequence[str] | None = None,
) -> None:
    """Publish (recorded as a release of `dataset`) and show the release; secure noise only.

    `declared`: the columns the owner declared publishable, `categories` the SA's categories the
    owner declared public (None: read from the data above a noisy threshold); the governance
    supplies both.
    Privacy claim: ((ρ1, ρ2) per record) + (ε for the partition plan, unit: one record's SA
    value), ε charged to the dataset before the table is read."""
    st.info(
        "Analyst mode: the exact partition of the registered table is not shown. A publication "
        "plans its sub-tables from noisy counts (ε charged to the dataset); you see the "
        "publication and its metadata only."
    )
    st.subheader("Publish")
    st.caption(" ".join(STATED_LIMITS))
    with user_errors():
        columns = published_columns(df.columns, sa, dataset.uid, declared)
    others = [c for c in columns if c != sa]
    st.markdown(
        "**Published columns:** the sensitive attribute"
        + (f" and {', '.join(others)} (declared publishable by the data owner)." if others else
           " only (the data owner has declared no other column publishable).")
    )  # fmt: skip
    epsilon = st.number_input(
        "ε for the partition plan (charged to the dataset)",
        min_value=0.01,
        max_value=10.0,
        value=DEFAULT_PLAN_EPSILON,
        step=0.1,
        key="pp_analyst_plan_epsilon",
        help="The sub-tables are planned from value counts with discrete Laplace noise of scale "
        "2/ε. Smaller ε: more privacy, a noisier plan.",
    )
    accept_fallback = st.checkbox(
        "If the plan is refused, publish the whole table as one sub-table (single-table fallback)",
        key="pp_accept_fallback",
    )
    noise = Noise.secure()
    key = (settings["data"], sa, settings["rho1"], settings["rho2"], epsilon, accept_fallback)
    charge = ReleaseSettings(
        settings["rho1_value"], settings["rho2_value"], plan_epsilon=float(epsilon),
        categories=None if categories is None else tuple(categories),
    ).cost  # fmt: skip
    st.caption(
        f"Publishing charges ε = {charge.epsilon:g}, δ = {charge.delta:.2g} to dataset "
        f"'{dataset.name}' (δ: the SA values are listed only above a noisy threshold)."
    )
    if st.button("Publish (perturb)", key="pp_publish", type="primary"):
        st.session_state.pop(PUBLICATION, None)
        with user_errors():
            release_settings = ReleaseSettings(
                settings["rho1_value"], settings["rho2_value"], plan_epsilon=float(epsilon),
                tie_policy=settings["tie"], merge_policy=settings["merge"],
                missing=settings["missing"], accept_fallback=accept_fallback,
                categories=None if categories is None else tuple(categories),
            )  # fmt: skip
            accountant = Accountant(noise, release_settings.cost, release_settings.claim)
            params = {
                "data": settings["data"], "sa": sa, "rho1": settings["rho1"],
                "rho2": settings["rho2"], "tie": settings["tie"], "merge": settings["merge"],
                "missing": settings["missing"], "plan_epsilon": float(epsilon),
                "columns": columns, "accept_fallback": accept_fallback, "noise": noise.mode,
                "via": "app", "mode": "analyst",
            }  # fmt: skip
            release, pub = publish_recorded(
                registry, dataset.name, release_settings, params,
                lambda: publish(df, sa, columns, release_settings, accountant),
            )  # fmt: skip
            st.session_state[PUBLICATION] = (key, pub, recorded_text(release))
    stored = st.session_state.get(PUBLICATION)
    if stored is None:
        return
    made_with, pub, recorded = stored
    if made_with[:2] != key[:2]:  # another dataset or SA: that publication is not this one's
        st.session_state.pop(PUBLICATION, None)
        return
    if made_with != key:
        st.warning("Earlier publication — made with other settings than the ones above.")
    st.info(recorded)
    show_publication(pub)


def published_plan_frame(pub: Publication) -> pd.DataFrame:
    """The published sub-tables (from the metadata: the plan made from noisy counts)."""
    return pd.DataFrame(
        [
            {
                "sub-table": s["id"],
                "planned size (noisy)": s["size"],
                "domain size m_i": s["m"],
                "retention p_i": s["p"],
                "posterior bound": s["posterior_bound"],
            }
            for s in pub.metadata["subtables"]
        ]
    )


def show_publication(pub: Publication) -> None:
    """Released values only: the claim, the published plan, estimates from the published table +
    metadata, and downloads. The SA is the publication's own (its metadata), never the page's
    current choice: another column's raw values are not a publication."""
    published = pub.table
    meta = pub.metadata
    sa = pub.sa
    for line in meta["privacy"]["statement"]:
        st.caption(line)
    st.markdown(
        f"**Published:** columns {', '.join(map(str, published.columns))}; "
        f"{len(meta['subtables'])} sub-table(s), planned from noisy counts."
    )
    st.dataframe(published_plan_frame(pub), hide_index=True, key="pp_analyst_plan")
    est = estimate_distribution(published, sa, SUBTABLE_COLUMN, meta["subtables"])
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
        "Published CSV", pub.csv(), csv_name.name, "text/csv", key="pp_dl_csv",
        on_click="ignore",
    )  # fmt: skip
    d2.download_button(
        "Sub-table metadata", json.dumps(meta, indent=2),
        csv_name.with_suffix(".metadata.json").name, "application/json", key="pp_dl_meta",
        on_click="ignore",
    )  # fmt: skip
