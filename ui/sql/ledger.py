"""The DP SQL page's Ledger tab (what the registry recorded for the data on screen) and the
owner's Teaching tab (exact intermediate tables, never released)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.registry import Dataset, Registry
from ui.budget import budget_bars
from ui.data import DataChoice
from ui.downloads import download
from ui.outcomes import user_errors
from ui.sql.engine import NON_PRIVATE_LABEL, POOL, Prepared, engine_for, stage_tables
from ui.sql.explain import threshold_of
from ui.sql.tables import SqlData
from ui.state import persist

SQL_TOOL = "sql"
RUN_COLUMNS = ["id", "time", "tool", "kind", "status", "ε", "δ", "noise", "query"]


def _recorded_runs(registry: Registry, dataset: Dataset | None, data_key: str) -> list:
    """The registered dataset's releases (all tools: the budget is the dataset's), or the SQL
    runs recorded for this unregistered data (matched by its key, so they survive a reload)."""
    if dataset is not None:
        return registry.releases(dataset.name)
    return [
        r
        for r in registry.releases()
        if r.dataset is None and r.tool == SQL_TOOL and r.params.get("data") == data_key
    ]


def _runs_frame(runs: list) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"id": r.id, "time": r.time, "tool": r.tool, "kind": r.kind.value,
             "status": r.status.value, "ε": r.epsilon, "δ": r.delta, "noise": r.mode,
             "query": r.params.get("query", "")}
            for r in runs
        ],
        columns=RUN_COLUMNS,
    )  # fmt: skip


def ledger_tab(choice: DataChoice) -> None:
    try:
        registry = choice.registry or Registry()
    except InputError:
        st.warning("The registry could not be opened: runs on this data are not recorded.")
        return
    runs = _recorded_runs(registry, choice.dataset, choice.key)
    if choice.dataset is not None:  # read now: after a charge in this run, never stale
        d = choice.dataset
        eps_spent, delta_spent = registry.spent(d.name)
        p = d.policy
        budget_bars(registry, d, metrics=False)  # ε and δ: one budget
        caps_text = ", ".join(
            f"{name} {value:g} per query"
            for name, value in (("ε", p.max_epsilon_per_query), ("δ", p.max_delta_per_query))
            if value is not None
        )
        st.write(
            f"Dataset **{d.name}** (registry): spent ε = {eps_spent:.4g} of {p.epsilon_total:g}, "
            f"δ = {delta_spent:.2e} of {p.delta_total:.1e}"
            + (f"; caps: {caps_text}" if caps_text else "")
            + ". Every tool and every session charges this one budget (basic composition: "
            "sums). A query that would exceed it is refused before it reads any data. Only the "
            "data owner changes a total, with `dpx dataset budget` (recorded); there is no reset."
        )
    else:
        total = sum(r.epsilon for r in runs)
        st.info(
            "Unregistered data (demo or upload): each run is recorded in the registry as an "
            "unregistered run (seeded runs as demo runs), **not limited across runs** — exactly "
            "as `dpx sql --table`. To give data a budget, the owner registers it with "
            "`dpx dataset add NAME --table T=FILE --uid COL --epsilon E`."
        )
        st.write(
            f"Recorded for this data: {len(runs)} run(s), ε = {total:.4g} in total (not a budget)."
        )
    frame = _runs_frame(runs)
    st.dataframe(frame, hide_index=True, key="dpsql_ledger_table")
    download(st, "Recorded runs (CSV)", frame.to_csv(index=False), "dpsql_runs.csv", "text/csv",
             key="dpsql_dl_csv")  # fmt: skip


def teaching_tab(prepared: Prepared, data: SqlData) -> None:
    st.error(f"**{NON_PRIVATE_LABEL}.** These tables are exact; never publish them.")
    if not st.toggle(
        "Show the per-stage intermediate tables", persist_state="session",
        key=persist("dpsql_teach", False),
    ):  # fmt: skip
        return
    with user_errors(), POOL.slot():  # the shared execution pool, like every run
        stages = stage_tables(prepared, engine_for("DuckDB", data.engine_key, data.catalog), 50)
    for name, frame in stages.items():
        st.markdown(f"**{name}** — not private — for learning only (first 50 rows)")
        st.dataframe(frame, hide_index=True, key=f"dpsql_stage_{name}")
    cross = stages["cross_user"]
    th = threshold_of(prepared)
    if th is not None:
        above = int((cross["n_units"] >= th.integer).sum())
        st.write(
            f"In the first {len(cross)} partitions of cross_user, {above} have at least "
            f"T = {th.integer} units; the noisy count decides which are released."
        )
