"""The DP SQL page's Plan step: per-aggregate targets → the smallest ε meeting every one.

The same call as `dpx plan sql`: `core.planning.sql.plan_sql` plans the query as written at
candidate ε from its public parameters (bounds, C_u, δ, weights) and reads the planned
mechanisms' half-widths and the threshold's survival probabilities. No table is read and
nothing is charged, in either role. The planned ε can be written into the query's OPTIONS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.dpsql.plan.planner import aggregate_names
from core.dpsql.service import Prepared
from core.planning.sql import SqlPlan, plan_sql
from core.planning.sql_targets import parse_target
from ui import state
from ui.glossary import in_app
from ui.plan.common import plan_box, show_basis
from ui.sql.request import SqlPlanRequest
from ui.state import persist

ANSWER_KEY = "dpsql_plan_answer"
QUERY_WIDGET = "dpsql_query"  # ui.sql.query's text area
_OPTIONS = re.compile(r"\bOPTIONS\s*\(([^()]*)\)", re.IGNORECASE)
_EPSILON = re.compile(r"(\bepsilon\s*=\s*)([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)", re.IGNORECASE)


@dataclass(frozen=True)
class KeptPlan:
    """A plan kept for the session, with the typed request it was computed from."""

    request: SqlPlanRequest
    plan: SqlPlan


def parse_targets(text: str) -> list[str]:
    """The targets typed one per line (or comma-separated): `NAME=HALF_WIDTH[@UNITS]`."""
    return [t.strip() for t in re.split(r"[\n,;]+", text or "") if t.strip()]


def with_epsilon(sql: str, epsilon: float) -> str | None:
    """`sql` with the ε of its one OPTIONS (...) clause set to `epsilon`; None when the query
    does not state exactly one ε there (then the page shows the ε instead)."""
    clauses = list(_OPTIONS.finditer(sql or ""))
    if len(clauses) != 1:
        return None
    clause = clauses[0]
    inside = clause.group(1)
    if len(_EPSILON.findall(inside)) != 1:
        return None
    new_inside = _EPSILON.sub(lambda m: f"{m.group(1)}{epsilon:g}", inside)
    start, end = clause.span(1)
    return sql[:start] + new_inside + sql[end:]


def _without_epsilon(sql: str) -> str:
    """The query with its ε normalised: a plan does not depend on the ε the query states, so
    carrying the planned ε into the query keeps the plan on screen."""
    return with_epsilon(sql, 1.0) or sql


def _write_epsilon(epsilon: float) -> None:
    """Button callback: the query text's ε becomes the planned one (before the next run)."""
    new = with_epsilon(st.session_state.get(QUERY_WIDGET, ""), epsilon)
    if new is not None:
        st.session_state[QUERY_WIDGET] = new
        persist(QUERY_WIDGET)  # and its kept shadow: a reload right after keeps it


def plan_step(prepared: Prepared) -> None:
    """The Plan step (drawn before Run). Releases nothing: public parameters only."""
    with plan_box("the ε for the accuracy you need", "dpsql_plan_open") as is_open:
        if not is_open:
            return
        names = aggregate_names(prepared.query)
        c1, c2 = st.columns([3, 1])
        text = c1.text_area(
            "Targets, one per line: NAME=HALF_WIDTH, NAME=HALF_WIDTH@UNITS or NAME=PCT%@UNITS",
            persist_state="session", key=persist("dpsql_plan_targets", ""), height=90,
            placeholder="\n".join(f"{n}=50@200" for n in names[:3]),
            help=f"The query's aggregates: {', '.join(names)}. '@200': for groups of at least "
            "200 units (also the group size whose survival is shown).",
        )  # fmt: skip
        confidence = c2.number_input(
            "Confidence", min_value=0.5, max_value=0.999, step=0.01, format="%.3f",
            persist_state="session", key=persist("dpsql_plan_conf", 0.95),
        )  # fmt: skip
        targets = parse_targets(text)
        request = SqlPlanRequest.of(_without_epsilon(prepared.query.text), targets, confidence)
        if st.button("Plan", key="dpsql_plan_run", disabled=not targets):
            parsed = [parse_target(t) for t in targets]
            plan = plan_sql(prepared, parsed, float(confidence))
            state.put(ANSWER_KEY, KeptPlan(request, plan), "the DP SQL plan")
        kept: KeptPlan | None = state.current(ANSWER_KEY, KeptPlan, SqlPlanRequest)
        if kept is None:
            if not targets:
                st.info("Type at least one target, then press **Plan**.")
            return
        if kept.request.fingerprint() != request.fingerprint():
            st.info("The query or the targets changed: press **Plan** to plan again.")
            return
        show_plan(kept.plan)


def show_plan(plan: SqlPlan) -> None:
    st.success(in_app(plan.describe()))
    show_basis(plan.basis)
    st.dataframe(targets_frame(plan), hide_index=True)
    c1, c2 = st.columns(2)
    c1.markdown("**Split of the planned ε** (the query's own weights)")
    c1.dataframe(
        pd.DataFrame(
            [(r.label, r.epsilon, r.delta, r.scale) for r in plan.as_written.rows],
            columns=["mechanism", "ε", "δ", "noise scale"],
        ),
        hide_index=True,
    )
    th = plan.as_written.threshold
    c2.markdown(
        "**Threshold** "
        + ("none (no group is suppressed)" if th is None else f"T = {th} (noisy unit count)")
    )
    c2.dataframe(
        pd.DataFrame(plan.survival, columns=["group of units", "P(released)"]), hide_index=True
    )
    st.caption(
        "C_u trade-off (optimised split): "
        + ", ".join(
            f"C_u = {r.max_groups}: ε {r.epsilon:g}" if r.epsilon else f"C_u = {r.max_groups}: —"
            for r in plan.cu_tradeoff
        )
    )
    st.caption(
        f"For a budget plan (Releases page): `sql:{plan.epsilon:g}/{plan.as_written.delta:g}`"
    )
    carry(plan)


def targets_frame(plan: SqlPlan) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "aggregate": c.target.aggregate,
                "target ±": c.required,
                f"planned ± at {plan.confidence:.0%}": c.planned,
                "met": "yes" if c.met else "no",
                "group size": c.target.min_units,
                "P(group released)": c.survival,
            }
            for c in plan.as_written.checks
        ]
    )


def carry(plan: SqlPlan) -> None:
    """Write the planned ε into the query (when its OPTIONS state one ε), or say what to type."""
    current = st.session_state.get(QUERY_WIDGET, "")
    if with_epsilon(current, plan.epsilon) is None:
        st.info(f"Set epsilon = {plan.epsilon:g} in the query's OPTIONS to release as planned.")
        return
    if with_epsilon(current, plan.epsilon) == current:
        st.caption(f"The query already states epsilon = {plan.epsilon:g}.")
        return
    st.button(
        f"Write ε {plan.epsilon:g} into the query", key="dpsql_plan_use",
        on_click=_write_epsilon, args=(plan.epsilon,),
    )  # fmt: skip
