"""The PP page's publication: what was released, with (owner only) the evaluation against the
raw table, and the downloads. Seeded publications say so in their file names and headers."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from core.balancing.estimate import estimate_distribution, random_count_queries
from core.balancing.plan import PartitionPlan
from core.balancing.publish import SUBTABLE_COLUMN, published_name
from core.balancing.report import INTERNAL_LABEL, INTERNAL_REPORT_NAME, internal_report
from core.privacy import Noise
from core.viz.balancing import distributions_figure
from ui.downloads import download, seeded_name
from ui.noise import current_noise
from ui.pp.publish import Published


def _noise(p: Published) -> Noise:
    return Noise.seeded(p.seed) if p.seed is not None else Noise.secure()


def show_kept(p: Published, current: tuple) -> None:
    """The kept publication's header: whether it matches the settings on screen (and the noise
    mode), its noise."""
    if (p.settings, p.columns, p.accept_fallback, p.noise) != current:
        st.warning(
            "Earlier publication — made with other settings (SA, ρ, columns, record order, "
            "fallback or noise mode) than the ones above. Press **Publish** to publish with the "
            "current ones."
        )
    if p.seed is not None:
        st.warning(f"This publication used seeded noise: {_noise(p).label}.")
    st.info(p.recorded)


def estimates(p: Published) -> dict:
    pub = p.publication
    return {
        e.value: e
        for e in estimate_distribution(
            pub.table, p.settings.sa, SUBTABLE_COLUMN, pub.metadata["subtables"]
        )
    }


def owner_evaluation(p: Published, df: pd.DataFrame, plan: PartitionPlan) -> None:
    """Original vs published vs reconstructed, and random count queries (uses the raw data)."""
    pub, sa = p.publication, p.settings.sa
    est = estimates(p)
    values = [v for v in plan.canonical if v in est][:60]
    pub_counts = pub.table[sa].astype(str).value_counts()
    st.plotly_chart(
        distributions_figure(
            values, [plan.counts[v] for v in values],
            [int(pub_counts.get(v, 0)) for v in values],
            [float(est[v].estimate) for v in values], [est[v].half_width for v in values],
        ),
        key="pp_publish_chart",
    )  # fmt: skip
    tv = sum(abs(float(est[v].estimate) - plan.counts[v]) for v in est) / (2 * plan.n)
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
        f"**Published:** {len(pub.table):,} rows, columns "
        f"{', '.join(map(str, pub.table.columns))}; {len(pub.metadata['subtables'])} "
        "sub-table(s)."
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
    noise = _noise(p)
    csv_name = published_name("pp_published.csv", noise)
    cols = st.columns(3 if plan is not None else 2)
    download(
        cols[0], "Published CSV", pub.table.to_csv(index=False), csv_name.name, "text/csv",
        key="pp_dl_csv", seed=p.seed,
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
    cols[1].caption("Released with the CSV (parameters and sub-table domains).")
    if plan is not None:
        report = internal_report(plan, noise=noise.describe(), publication=pub.metadata)
        download(
            cols[2], "Run report (INTERNAL)", json.dumps(report, indent=2),
            seeded_name(INTERNAL_REPORT_NAME, p.seed is not None), "application/json",
            key="pp_dl_report", seed=p.seed,
        )  # fmt: skip
        cols[2].caption(INTERNAL_LABEL)
