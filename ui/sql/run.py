"""The DP SQL page's Run tab: what a run will charge, the run itself (`run_step`, the ONE place
this page makes a release, through `core.governance.govern`), and the released rows with their
intervals.

Budgets are the release registry's, never the browser session's: a registered dataset's runs
are charged to its (ε, δ) budget (one atomic registry transaction before any data is read, with
the dataset policy's per-query caps), so a reload, a restart, a second browser and
`dpx sql --dataset` all see one spend. Demo tables and uploads are recorded as unregistered
runs, not limited across runs — exactly as `dpx sql --table` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

import core.sparkutil as sparkutil
from core.dpsql.record import sql_artefact
from core.dpsql.service import check_before_charge, run
from core.errors import InputError
from core.governance import ComputeFailed, govern
from core.governance.origin import Origin
from core.governance.sql import sql_request
from core.privacy import Noise
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
    plan_text,
    release_button,
    show_kept_outcome,
)
from ui.shell import role
from ui.sql.engine import (
    CI_CAVEAT,
    ENGINES,
    PAGE_LIMITS,
    POOL,
    Prepared,
    QueryResult,
    caps_of,
    engine_for,
    ledger_row,
    planned_cost,
)
from ui.sql.request import SqlPageRequest
from ui.sql.tables import SqlData
from ui.state import kept, persist

SQL_TOOL = "sql"
RESULT = "dpsql_result"


@dataclass(frozen=True)
class ShownResult:
    """A released result kept for the session: released values only, and the typed request it
    was made with (`ui.sql.request.SqlPageRequest`; stale when its fingerprint differs from
    the page's)."""

    request: SqlPageRequest
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    ci95: dict
    intervals95: dict
    threshold: int | None
    partitions_released: int
    ledger: tuple[dict, ...]
    release_id: int | None
    plan: str = ""  # where the release stands against the dataset's budget plan

    @classmethod
    def of(
        cls, result: QueryResult, request: SqlPageRequest, release_id, plan: str = ""
    ) -> ShownResult:
        th = result.released.threshold
        return cls(
            request, tuple(result.columns),
            tuple(tuple(row) for row in result.table.itertuples(index=False)),
            dict(result.ci95), dict(result.intervals), None if th is None else int(th.integer),
            int(result.released.partitions_released),
            tuple(ledger_row(m) for m in result.mechanisms), release_id, plan,
        )  # fmt: skip

    @property
    def sql(self) -> str:
        return self.request.sql

    @property
    def noise_label(self) -> str:
        return self.request.noise_label


def run_tab(
    choice: DataChoice, data: SqlData, prepared: Prepared, request: SqlPageRequest, noise: Noise
):
    """What a run will charge, the Run button and the kept result. `request`: the run asked for
    (the page's typed state); `noise`: the live generator `prepared` drew its sampling salt
    from, which the run goes on drawing from (of the request's mode and seed)."""
    eps, delta = planned_cost(prepared)
    cap_eps, cap_delta = caps_of(choice.dataset)
    cap_text = ", ".join(
        f"{name} ≤ {value:g}"
        for name, value in (("ε", cap_eps), ("δ", cap_delta))
        if value is not None
    )
    st.caption(f"Noise: {noise.label}.")
    st.caption(
        f"Limits: each query may run {PAGE_LIMITS.timeout_s:g} s on "
        f"{PAGE_LIMITS.threads} thread(s) with at most {PAGE_LIMITS.memory_limit} of memory; a "
        "query stopped after it read data keeps its charge. Per-query caps: "
        + (f"{cap_text} (dataset `{choice.dataset.name}` policy)." if cap_text else "none.")
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
        run_step(choice, data, prepared, request, noise, engine_name)
    show_kept_outcome("dpsql")
    res: ShownResult | None = state.current(RESULT, ShownResult, SqlPageRequest)
    if res is not None:
        show_result(res, request)


def run_step(
    choice,
    data: SqlData,
    prepared: Prepared,
    request: SqlPageRequest,
    noise: Noise,
    engine_name: str,
):
    """Govern one run: policies, the charge of `prepared.cost` (registry), the staged SQL with
    an accountant holding that charge, the typed record and the mechanisms that drew; keep the
    result, or the refusal or failure, for the session. Privacy claim: (ε, δ)-DP at unit level,
    charged before any data is read."""
    state.drop(RESULT)  # a refused run leaves no earlier rows on screen
    keep_outcome("dpsql", None)
    registry = choice.registry if choice.dataset is not None else open_registry()
    door = Origin.app(state.session_id(), data=choice.key, seed=noise.seed, catalog=data.key,
                    role=role().value)  # fmt: skip
    governed_request = sql_request(
        prepared, role=role(), dataset=choice.dataset, noise=noise, door=door
    )
    unit_column = governed_request.claim.unit_column
    queued = st.empty()  # every session's queries share the process-wide pool

    def waiting(ahead: int) -> None:
        queued.info(f"Queued: {ahead} quer{'y' if ahead == 1 else 'ies'} ahead of this one…")

    try:
        with st.spinner("Running the staged query…"), POOL.slot(waiting):
            queued.empty()
            engine = engine_for(engine_name, data.engine_key, data.catalog)
            check_before_charge(prepared, engine)  # binding reads no data: refused uncharged
            governed = govern(
                registry,
                governed_request,
                lambda accountant: run(prepared, engine, accountant),
                lambda result: sql_artefact(result, unit_column).to_json(),
            )
    except ComputeFailed as exc:  # charged, then failed: the charge stands
        keep_outcome("dpsql", Outcome(OutcomeKind.FAILED, "Run", str(exc)))
        charged()
        return
    except InputError as exc:  # budget, caps, seeded on real data: recorded, nothing charged
        keep_outcome("dpsql", Outcome(OutcomeKind.REFUSED, "Run", str(exc)))
        charged()
        return
    release_id = None if governed.record is None else governed.record.id
    shown = ShownResult.of(governed.result, request, release_id, plan_text(registry, [release_id]))
    state.put(RESULT, shown, "the result")
    state.mark_shown([release_id])
    charged(choice.dataset)


def show_result(res: ShownResult, request: SqlPageRequest) -> None:
    """Draw a released result; label it when it came from another request (query, data or noise
    mode) than the one on screen. Only released values are shown (rows, intervals, T); nothing
    here reads data."""
    if res.request.fingerprint() != request.fingerprint():
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
        st.caption(f"Release #{res.release_id} in the registry. {res.plan}".rstrip())
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
