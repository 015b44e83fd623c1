"""The DP SQL page's Run tab: what a run will charge, the run itself (`run_step`, the ONE place
this page makes a release — the lead rewires it to `core.governance.govern`), and the released
rows with their intervals.

Budgets are the release registry's, never the browser session's: a registered dataset's runs
are charged to its (ε, δ) budget through a `RegistryLedger` (one atomic registry transaction
before any data is read, with the dataset policy's per-query caps), so a reload, a restart, a
second browser and `dpx sql --dataset` all see one spend. Demo tables and uploads are recorded
as unregistered runs, not limited across runs — exactly as `dpx sql --table` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

import core.sparkutil as sparkutil
from core.errors import InputError
from core.privacy import BudgetLedger, Noise
from core.registry.ledger import RegistryLedger
from core.viz.dpsql import group_labels, key_columns, result_figure, result_table
from ui import state
from ui.data import DataChoice
from ui.outcomes import (
    ChargePlan,
    Outcome,
    OutcomeKind,
    charged,
    keep_outcome,
    open_registry,
    release_button,
    show_kept_outcome,
)
from ui.shell import role
from ui.sql.engine import (
    CI_CAVEAT,
    ENGINES,
    PAGE_LIMITS,
    Prepared,
    QueryResult,
    caps_of,
    engine_for,
    planned_cost,
    run_query,
)
from ui.sql.tables import SqlData
from ui.state import kept, persist

SQL_TOOL = "sql"
RESULT = "dpsql_result"


@dataclass(frozen=True)
class ShownResult:
    """A released result kept for the session: released values only, and what made it."""

    sql: str
    engine_key: str
    noise_label: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    ci95: dict
    intervals95: dict
    threshold: int | None
    partitions_released: int
    ledger: tuple[dict, ...]
    release_id: int | None

    @classmethod
    def of(cls, result: QueryResult, sql: str, engine_key: str, release_id) -> ShownResult:
        th = result.released.threshold
        return cls(
            sql, engine_key, result.noise.label, tuple(result.columns),
            tuple(tuple(row) for row in result.table.itertuples(index=False)),
            dict(result.ci95), dict(result.intervals), None if th is None else int(th.integer),
            int(result.released.partitions_released),
            tuple(dict(s.__dict__) for s in result.spends), release_id,
        )  # fmt: skip


def run_tab(choice: DataChoice, data: SqlData, prepared: Prepared, sql: str, noise: Noise):
    eps, delta = planned_cost(prepared)
    caps = caps_of(choice.dataset)
    cap_text = ", ".join(
        f"{name} ≤ {value:g}"
        for name, value in (("ε", caps.max_epsilon), ("δ", caps.max_delta))
        if value is not None
    )
    st.caption(f"Noise: {noise.label}.")
    st.caption(
        f"Limits: each query may run {PAGE_LIMITS.timeout_s:g} s on "
        f"{PAGE_LIMITS.threads} thread(s) with at most {PAGE_LIMITS.memory_limit} of memory; a "
        "query stopped after it read data keeps its charge. Per-query caps: "
        + (f"{cap_text} ({caps.source})." if cap_text else "none.")
    )
    engine_name = ENGINES[0]
    if sparkutil.spark_unavailable_reason() is None:  # offered only where it can run
        engine_name = st.radio(
            "Engine", ENGINES, horizontal=True, persist_state="session",
            key=persist("dpsql_engine", ENGINES[0]),
            help="Where the staged SQL runs: embedded DuckDB, or Apache Spark in local mode "
            "(same plan, same sampling key: the same seed releases the same rows). Noise is "
            "always added here, in Python.",
        )  # fmt: skip
    plan = ChargePlan.of(
        choice.registry, choice.dataset, eps, delta, seeded=not noise.is_secure
    )  # fmt: skip
    if release_button("Run query", plan, key="dpsql_run"):
        run_step(choice, data, prepared, sql, noise, engine_name)
    show_kept_outcome("dpsql")
    res: ShownResult | None = state.get(RESULT)
    if res is not None:
        show_result(res, current=(sql, data.engine_key, noise.label))


def run_step(choice, data: SqlData, prepared: Prepared, sql: str, noise: Noise, engine_name):
    """Charge (registry), run, release; keep the result, or the refusal or failure, for the
    session. Privacy claim: (ε, δ)-DP at unit level, charged before any data is read."""
    state.drop(RESULT)  # a refused run leaves no earlier rows on screen
    keep_outcome("dpsql", None)
    registry = choice.registry if choice.dataset is not None else open_registry()
    params = {
        "query": sql, "data": choice.key, "catalog": data.key, "via": "app",
        "session": state.session_id(), "role": role().value,
    }  # fmt: skip
    ledger = (
        RegistryLedger(registry, SQL_TOOL, choice.dataset, params, noise.mode)
        if registry is not None
        else None
    )
    try:
        with st.spinner("Running the staged query…"):
            engine = engine_for(engine_name, data.engine_key, data.catalog)
            result = run_query(
                prepared, engine, noise, ledger if ledger is not None else BudgetLedger(),
                caps_of(choice.dataset),
            )  # fmt: skip
    except InputError as exc:  # budget, caps, seeded on real data, a failed run
        keep_outcome("dpsql", _failure(registry, choice, ledger, params, exc))
        charged()
        return
    release_id = None
    if ledger is not None and ledger.release is not None:
        registry.attach(ledger.release.id, result.to_dict())
        release_id = ledger.release.id
    state.put(RESULT, ShownResult.of(result, sql, data.engine_key, release_id), "the result")
    state.mark_shown([release_id])
    charged(choice.dataset)


def _failure(registry, choice, ledger, params, exc: InputError) -> Outcome:
    if ledger is not None and ledger.release is not None:
        registry.fail(ledger.release.id, str(exc))  # charged: the charge stands
        return Outcome(OutcomeKind.FAILED, "Run", str(exc), ledger.release.id)
    if choice.dataset is not None and ledger is not None and not ledger.refused:
        # refused by the caps or the budget check before the registry's charge step (which
        # records its own refusals): recorded here, charging nothing
        registry.refuse(SQL_TOOL, choice.dataset.name, str(exc), params)
    return Outcome(OutcomeKind.REFUSED, "Run", str(exc))


def show_result(res: ShownResult, current: tuple[str, str, str]) -> None:
    """Draw a released result; label it when it came from another query, data or noise mode.
    Only released values are shown (rows, intervals, T); nothing here reads data."""
    if (res.sql, res.engine_key, res.noise_label) != current:
        st.warning(
            "Earlier result — it was released for a different query, data or noise mode than "
            "the ones above. Press **Run query** to release a result for the current query."
        )
        with st.expander("The query of this earlier result"):
            st.code(res.sql, language="sql")
    if not res.noise_label.startswith("secure"):
        st.warning(f"Seeded noise: {res.noise_label}.")
    rows, columns = [list(r) for r in res.rows], list(res.columns)
    table = result_table(rows, columns, res.ci95)
    r1, r2 = st.columns(2)
    r1.metric("Partitions released", res.partitions_released)
    r2.metric("Threshold T", res.threshold or "none (public groups)")
    st.caption(
        "Suppressed partitions are not counted here: an exact count of dropped groups is "
        "not private (see the Teaching view for learning). " + CI_CAVEAT + "."
    )
    if table.empty and res.threshold is not None:
        st.info(
            f"No group reached the release threshold T = {res.threshold}. Raise ε, lower C_u, "
            "use fewer aggregates, or group more coarsely."
        )
    if res.release_id is not None:
        st.caption(f"Release #{res.release_id} in the registry.")
    st.dataframe(table, hide_index=True, key="dpsql_result_table")
    numeric = [c for c, widths in res.ci95.items() if widths and widths[0] is not None]
    if numeric and rows:
        col = numeric[0]
        if len(numeric) > 1:
            col = st.selectbox(
                "Chart", numeric, persist_state="session", key=kept("dpsql_chart_col", numeric)
            )
        labels = group_labels(rows, columns, key_columns(columns, res.ci95))
        values = [row[columns.index(col)] for row in rows]
        iv = res.intervals95[col]
        st.plotly_chart(
            result_figure(labels, values, [a for a, _ in iv], [b for _, b in iv], col),
            key="dpsql_result_chart",
        )
    st.write("Ledger entries of this run")
    st.dataframe(pd.DataFrame(list(res.ledger)), hide_index=True, key="dpsql_run_ledger")
