"""DP SQL: register tables, write or build a SELECT WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY
query, see its staged rewrite, release noisy rows with 95% intervals.

Steps: choose data → public tables and the privacy unit (`ui.sql.tables`) → the query
(`ui.sql.query`: an example for the data on screen, the builder, one text per data source) →
tabs: Explain (public parameters only), Run (`ui.sql.run.run_step`, the one place this page
releases), Ledger (the registry's runs for this data) and, for the owner, Teaching.
"""

from __future__ import annotations

import streamlit as st

from core.dpsql.demos import PUBLIC_TABLES
from ui.data import DemoKind, choose_data
from ui.noise import current_noise
from ui.outcomes import show_not_shown, user_errors
from ui.plan.bounds import bounds_step
from ui.plan.sql import plan_step
from ui.shell import is_analyst, page_setup
from ui.sql.engine import prepare
from ui.sql.explain import explain_tab
from ui.sql.ledger import ledger_tab, teaching_tab
from ui.sql.query import query_step
from ui.sql.request import SqlPageRequest
from ui.sql.run import SQL_TOOL, run_tab
from ui.sql.tables import choose_tables, previews
from ui.state import kept

TABS = ["Explain", "Run", "Ledger", "Teaching"]
ANALYST_TABS = TABS[:3]  # no Teaching view: its exact intermediate tables are not releases

page_setup()
st.title("DP SQL")
st.write(
    "Write SQL with `SELECT WITH ANONYMIZATION` (Wilson et al.) or `SELECT WITH "
    "DIFFERENTIAL_PRIVACY` (ZetaSQL/BigQuery). The query is rewritten into stages — per-user "
    "aggregation, at most C_u groups per user, clamping — then noise is added outside SQL and "
    "groups with too few users are suppressed."
)

st.header("1 · Tables")
with user_errors():
    choice = choose_data(
        "dpsql", DemoKind.SQL, multiple=True, in_place=True,  # uploads read where they lie
        public_tables={k: frozenset(v) for k, v in PUBLIC_TABLES.items()},
    )  # fmt: skip
    show_not_shown(choice, [SQL_TOOL], key="dpsql")
    data = choose_tables(choice)
    previews(data)

st.header("2 · Query")
sql = query_step(choice, data)
noise = current_noise()
bounds_step(choice, data, noise)  # a charged release of its own, stated before the click
with user_errors():
    prepared = prepare(sql, data.catalog, noise)
plan_step(prepared)  # before Run: the ε the targets need (public parameters only)

labels = ANALYST_TABS if is_analyst() else TABS
# the active tab is kept across reruns, navigation and a reload (every tab is drawn: a button's
# outcome or a refusal is in place whichever tab is open)
tabs = st.tabs(labels, key=kept("dpsql_tab", labels, labels[0]), on_change="rerun")
with tabs[0]:
    explain_tab(prepared, choice, data.uid)
with tabs[1]:
    # the page's state, typed (ui.sql.request): what a run is given, what a kept result holds,
    # and whose fingerprint tells it stale
    run_tab(choice, data, prepared, SqlPageRequest.of(sql, data, noise), noise)
with tabs[2]:
    ledger_tab(choice)
if len(tabs) > 3:
    with tabs[3]:
        teaching_tab(prepared, data)
