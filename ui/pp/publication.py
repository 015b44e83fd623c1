"""The PP page's publication: what was released, with (owner only) the evaluation against the
raw table, and the downloads. Seeded publications say so in their file names and headers."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.balancing.estimate import estimate_distribution, random_count_queries
from core.balancing.names import SUBTABLE_COLUMN, published_name
from core.balancing.plan import PartitionPlan
from core.balancing.publish import Publication
from core.balancing.report import INTERNAL_LABEL, INTERNAL_REPORT_NAME, internal_report
from core.viz.balancing import distributions_figure
from ui.downloads import download, seeded_name
from ui.noise import current_noise
from ui.pp.publish import Published
from ui.pp.request import PPPageRequest


def show_kept(p: Published, request: PPPageRequest) -> None:
    """The kept publication: whether it was made with the request on screen (settings, options
    and noise mode; what differs is named), what the registry recorded, its claim in sentences
    and the published (noisy) plan."""
    if p.request.fingerprint() != request.fingerprint():
        st.warning(
            "Earlier publication — made with other settings than the ones above ("
            + "; ".join(p.request.changes(request))
            + "). Press **Publish** to publish with the current ones."
        )
    if p.seed is not None:
        st.warning(f"This publication used seeded noise: {p.request.noise.label}.")
    st.info(p.recorded)
    pub = p.publication
    for line in pub.metadata["privacy"]["statement"]:
        st.caption(line)
    st.markdown(
        f"**Published plan** (from noisy counts): {len(pub.metadata['subtables'])} sub-table(s)"
        + (" — the single-table fallback." if pub.release.fallback else ".")
    )
    st.dataframe(published_plan_frame(pub).head(1000), hide_index=True, key="pp_release_plan")


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


def estimates(p: Published) -> dict:
    """Estimated SA counts from the published table and its metadata alone (the publication's
    own SA, never the page's current choice)."""
    pub = p.publication
    return {
        e.value: e
        for e in estimate_distribution(
            pub.table, pub.sa, SUBTABLE_COLUMN, pub.metadata["subtables"]
        )
    }


def owner_evaluation(p: Published, df: pd.DataFrame, plan: PartitionPlan) -> None:
    """Original vs published vs reconstructed, and random count queries (uses the raw data)."""
    pub, sa = p.publication, p.publication.sa
    est = estimates(p)
    values = plan.canonical[:60]  # a value without a planned slot is estimated 0
    pub_counts = pd.Series(pub.table[sa]).value_counts()
    st.plotly_chart(
        distributions_figure(
            values, [plan.counts[v] for v in values],
            [int(pub_counts.get(v, 0)) for v in values],
            [float(est[v].estimate) if v in est else 0.0 for v in values],
            [est[v].half_width if v in est else 0.0 for v in values],
        ),
        key="pp_publish_chart",
    )  # fmt: skip
    tv = sum(abs(float(e.estimate) - plan.counts.get(v, 0)) for v, e in est.items()) / (2 * plan.n)
    st.caption(
        "evaluation only — uses the raw data: the 'original' bars and the distance below are "
        f"computed from the unperturbed table. Total-variation distance original vs "
        f"reconstructed: {tv:.4f}."
    )
    qi = [c for c in pub.table.columns if c not in (sa, SUBTABLE_COLUMN)]
    if not qi:
        return
    queries = random_count_queries(
        df, pub.table, sa, SUBTABLE_COLUMN, pub.metadata["subtables"], qi,
        current_noise("evaluation"),
    )  # fmt: skip
    if len(queries):
        q1, q2 = st.columns(2)
        q1.metric(
            "Median relative error, 50 random count queries",
            f"{queries['relative_error'].median():.3f}",
        )
        q2.metric("95% intervals covering the true count", f"{queries['covered'].mean():.0%}")
        with st.expander("The random count queries (evaluation only — uses the raw data)"):
            st.dataframe(queries, hide_index=True)


def analyst_publication(p: Published) -> None:
    """Released values only: estimates from the published table and its metadata."""
    pub = p.publication
    st.markdown(
        f"**Published:** columns {', '.join(map(str, pub.table.columns))}; "
        f"{len(pub.metadata['subtables'])} sub-table(s), planned from noisy counts."
    )
    st.caption(
        "Estimated SA distribution, computed from the published table and its metadata only "
        "(95% intervals)."
    )
    st.dataframe(
        pd.DataFrame(
            [
                {"SA value": e.value, "estimate": float(e.estimate), "± 95%": e.half_width}
                for e in estimates(p).values()
            ]
        ),
        hide_index=True,
        key="pp_analyst_estimates",
    )


def downloads(p: Published, plan: PartitionPlan | None) -> None:
    """The published CSV and its metadata; with `plan` (owner only) the INTERNAL run report."""
    pub = p.publication
    noise = p.request.noise
    csv_name = published_name("pp_published.csv", noise)
    cols = st.columns(3 if plan is not None else 2)
    download(
        cols[0], "Published CSV", pub.csv(), csv_name.name, "text/csv", key="pp_dl_csv",
        seed=p.seed,
    )  # fmt: skip
    cols[0].caption(
        "The release."
        + ("" if p.seed is None else f" Seeded: its name ({csv_name.name}) and header say so.")
    )
    download(
        cols[1], "Sub-table metadata", json.dumps(pub.metadata, indent=2),
        csv_name.with_suffix(".metadata.json").name, "application/json", key="pp_dl_meta",
        seed=p.seed,
    )  # fmt: skip
    cols[1].caption("Released with the CSV (the claim, the mechanisms, the noisy plan).")
    if plan is not None:
        report = internal_report(plan, noise=noise.describe(), publication=pub.metadata)
        download(
            cols[2], "Run report (INTERNAL)", json.dumps(report, indent=2),
            seeded_name(INTERNAL_REPORT_NAME, p.seed is not None), "application/json",
            key="pp_dl_report", seed=p.seed,
        )  # fmt: skip
        cols[2].caption(INTERNAL_LABEL)
