"""The DP SQL page's query step: an example written for the data on screen, the builder over its
schema, and the query text — one text per data source, so a typed query survives switching to
another source and back, and a new source starts from an example that runs on its tables."""

from __future__ import annotations

import streamlit as st

from core.dpsql.builder import BUILDER_KINDS, BuilderAggregate, compose, from_options
from core.dpsql.demos import examples_for
from ui import state
from ui.data import DataChoice, Source
from ui.outcomes import user_errors
from ui.sql.tables import SqlData
from ui.state import kept, persist

try:  # TODO(dpsql, issue 19.5): core.dpsql provides example_query(catalog) — then drop this
    from core.dpsql.demos import example_query  # type: ignore[attr-defined]
except ImportError:  # not on main yet: a first query built from the schema alone
    example_query = None

QUERY = "dpsql_query"
TEXTS = "dpsql_query_texts"  # data key -> the query typed for it
SOURCE = "dpsql_query_source"  # the data key the text area holds a query for
COMPOSE = ["Example queries", "Builder"]
EPSILONS = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
DELTAS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3]


def examples(choice: DataChoice, data: SqlData) -> dict[str, str]:
    """Example queries (title -> SQL) that run on the data on screen: a demo's own examples, or
    for an upload or a registered dataset a first query over its own tables."""
    if choice.source is Source.DEMO and choice.demo is not None:
        return examples_for(choice.demo.name)
    if example_query is not None:
        return {"A first query on these tables": example_query(data.catalog)}
    return {"A first query on these tables": schema_example(data)}


def schema_example(data: SqlData) -> str:
    """COUNT(*) of the first private table: runs on any schema and reads nothing to be written
    (column names and the unit are public parameters)."""
    return compose(data.private[0], [], [BuilderAggregate("COUNT(*)", alias="n")], 1.0, 1e-5, 1,
                   data.uid)  # fmt: skip


def _switch_source(key: str, first: str) -> None:
    """Keep the text typed for the previous source; bring back this source's (or its first
    example). Runs before the text area is drawn."""
    texts = dict(state.get(TEXTS) or {})
    previous = st.session_state.get(SOURCE)
    if previous == key:
        return
    if previous is not None:
        texts[previous] = st.session_state.get(QUERY, "")
    st.session_state[QUERY] = texts.get(key, first)
    st.session_state[SOURCE] = key
    state.put(TEXTS, texts, "the queries typed for other data")
    persist(SOURCE)


def _load_example(options: dict[str, str], key: str) -> None:
    st.session_state[QUERY] = options[st.session_state[key]]


def query_step(choice: DataChoice, data: SqlData) -> str:
    """The query to prepare (stops the page while it is empty)."""
    options = examples(choice, data)
    titles = list(options)
    persist(SOURCE)
    _switch_source(data.key, options[titles[0]])
    mode = st.radio(
        "Compose", COMPOSE, horizontal=True, persist_state="session",
        key=kept("dpsql_compose", COMPOSE, COMPOSE[0]),
    )  # fmt: skip
    if mode == COMPOSE[0]:
        example_key = kept("dpsql_example", titles, titles[0])
        st.selectbox(
            "Example", titles, persist_state="session", key=example_key,
            on_change=_load_example, args=(options, example_key),
            help="Choosing an example replaces the query below.",
        )  # fmt: skip
    else:
        builder(data)
    sql = st.text_area("DP SQL", persist_state="session", key=persist(QUERY, ""), height=180)
    if not sql.strip():
        st.info("Write a DP SQL query, pick an example, or compose one with the builder.")
        st.stop()
    return sql


def builder(data: SqlData) -> None:
    """Compose a query over the private tables' schema; "Use this query" replaces the text."""
    with st.container(border=True), user_errors():
        froms = from_options(list(data.private), data.uid)
        frm = st.selectbox("FROM", froms, persist_state="session", key=kept("dpsql_b_from", froms))
        cols = data.columns
        keys = st.multiselect(
            "GROUP BY keys", cols, persist_state="session", key=kept("dpsql_b_keys", cols, [])
        )
        c1, c2, c3, c4, c5 = st.columns(5)
        kind = c1.selectbox(
            "Aggregate", BUILDER_KINDS, persist_state="session", key=persist("dpsql_b_kind")
        )
        column = c2.selectbox(
            "Column", cols, persist_state="session", key=kept("dpsql_b_col", cols)
        )
        lower = c3.number_input(
            "Lower bound L", persist_state="session", key=persist("dpsql_b_lo", 0.0)
        )
        upper = c4.number_input(
            "Upper bound U", persist_state="session", key=persist("dpsql_b_hi", 10.0)
        )
        alias = c5.text_input(
            "Name", persist_state="session", key=persist("dpsql_b_alias", "value")
        )
        e1, e2, e3 = st.columns(3)
        eps = e1.select_slider(
            "ε (more privacy ← → more accuracy)", options=EPSILONS, persist_state="session",
            key=persist("dpsql_b_eps", 1.0),
        )  # fmt: skip
        delta = e2.select_slider(
            "δ", options=DELTAS, persist_state="session", key=persist("dpsql_b_delta", 1e-5)
        )
        cu = e3.number_input(
            "C_u (max groups per unit)", 1, 100, persist_state="session",
            key=persist("dpsql_b_cu", 1),
        )  # fmt: skip
        if st.button("Use this query", key="dpsql_b_use"):
            agg = BuilderAggregate(kind, column, lower, upper, alias or None)
            st.session_state[QUERY] = compose(frm, keys, [agg], eps, delta, cu, data.uid)
