"""The DP SQL page's Explain tab: everything that follows from public parameters — the stages,
the staged SQL in a chosen dialect, the ε split, τ and T, the survival curve. Reads no data,
spends nothing."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.dpsql.demos import group_units
from core.dpsql.release import ThresholdInfo, threshold_info
from core.viz.dpsql import budget_figure, survival_figure
from ui.data import DataChoice, Source
from ui.downloads import download
from ui.shell import is_analyst
from ui.sql.engine import DIALECTS, Prepared, explain, to_bigquery
from ui.state import kept


def threshold_of(prepared: Prepared) -> ThresholdInfo | None:
    """τ, T, ε and the realised δ of the partition threshold; None with PUBLIC_GROUPS."""
    return threshold_info(prepared.plan)


def explain_tab(prepared: Prepared, choice: DataChoice, uid: str) -> None:
    st.caption(
        "Everything here follows from public parameters only: no data is read, nothing is spent."
    )
    dialect = st.selectbox(
        "Transpile to", DIALECTS, persist_state="session",
        key=kept("dpsql_dialect", list(DIALECTS)),
    )  # fmt: skip
    # TODO(dpsql): `explain` returns a dict (stages, budget_split, survival_curve); a typed
    # Explanation from core.dpsql would let this tab read attributes. The threshold is typed.
    info = explain(prepared, dialect)
    th = threshold_of(prepared)
    if th is None:
        st.info("PUBLIC_GROUPS: every key of the public table is released; no τ, no δ spent.")
    else:
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("τ (Wilson)", f"{th.tau:.2f}")
        m2.metric("T (integer threshold applied)", th.integer)
        m3.metric("ε for the unit count", f"{th.epsilon:.3g}")
        m4.metric("realised δ", f"{th.realised_delta:.2e}")
        if choice.source is Source.DEMO and choice.demo is not None and not is_analyst():
            _demo_group_sizes(choice, th)
    st.subheader("Stages (one CTE each)")
    for stage in info["stages"]:
        with st.expander(f"{stage['name']} — {stage['caption']}"):
            st.code(stage["sql"], language="sql")
    st.markdown("**Python steps after SQL:** " + " → ".join(info["python_steps"]))
    st.subheader(f"Staged SQL in {dialect}")
    st.code(info["rewritten_sql"], language="sql")
    with st.expander("Export to BigQuery syntax (BigQuery adds its own noise: numbers differ)"):
        bq_sql, bq_warnings = to_bigquery(prepared.query, uid)
        st.code(bq_sql, language="sql")
        for w in bq_warnings:
            st.warning(w)
        download(st, "Download .sql", bq_sql + ";\n", "dp_query_bigquery.sql", "text/plain",
                 key="dpsql_bq")  # fmt: skip
    st.subheader("Budget split")
    st.dataframe(pd.DataFrame(info["budget_split"]), hide_index=True, key="dpsql_split")
    st.plotly_chart(budget_figure(info["budget_split"]), key="dpsql_budget_chart")
    if info["survival_curve"] and th is not None:
        st.plotly_chart(
            survival_figure(info["survival_curve"], th.integer, th.tau), key="dpsql_survival"
        )
    st.caption(
        "AVG is the average of per-user averages; VAR/STDDEV/quantiles use at most "
        f"k = {prepared.query.options.max_rows_per_group} values per user and group."
    )


def _demo_group_sizes(choice: DataChoice, th: ThresholdInfo) -> None:
    with st.expander("Owner / teaching view — NOT PRIVATE: the demo's group sizes against T"):
        units = group_units(choice.demo.name, dict(choice.tables))
        st.caption(
            "Exact distinct units per department of the demo data (owner information, never "
            f"released). Groups well above T = {th.integer} are released almost surely; groups "
            "below it almost never."
        )
        sizes = units.reset_index().rename(columns={"units": "units (exact)"})
        sizes["vs T"] = ["above T" if u >= th.integer else "below T" for u in units.to_numpy()]
        st.dataframe(sizes, hide_index=True, key="dpsql_group_sizes")
