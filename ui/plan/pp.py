"""The PP page's Plan step: from the error you accept to the loosest (ρ1, ρ2), and the
feasibility and expected error of the (ρ1, ρ2) on screen.

The same calls as `dpx plan balance`: `core.planning.pp.plan_pp`, `strictest_rho2` and
`rho_frontier` on a `PPShape` — the SA's public categories (an even spread) and a table size.
The data owner plans on the table's row count (public under PP's claim, the owner's to use);
an analyst gives the size, or it is taken from the rows an earlier PP release of the dataset
published. No SA value is read in analyst mode and nothing is charged in either role.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.balancing.records import encode_sa
from core.balancing.release import DEFAULT_PLAN_EPSILON
from core.governance.artefacts import artefact_of
from core.planning.pp import PPPlan, PPShape, RhoAnswer, plan_pp, rho_frontier, strictest_rho2
from core.registry import RunKind, Tool
from ui import state
from ui.actions import queued
from ui.data import DataChoice
from ui.glossary import in_app
from ui.plan.common import plan_box
from ui.pp.inputs import PPSettings
from ui.pp.request import PPPlanRequest
from ui.shell import is_analyst
from ui.state import persist

ANSWER_KEY = "pp_plan_answer"
PLAN_EPS_WIDGET = "pp_plan_epsilon"  # ui.pp.publish's ε for the partition plan


@dataclass(frozen=True)
class PPAnswer:
    """A plan kept for the session, with the typed request it was computed from."""

    request: PPPlanRequest
    current: PPPlan  # the (ρ1, ρ2) on screen
    strictest: RhoAnswer  # the smallest ρ2 meeting the target at the ρ1 on screen
    frontier: tuple[RhoAnswer, ...]


def rho2_widget(choice: DataChoice) -> str:
    return f"pp_rho2_{choice.key}"  # ui.pp.inputs' ρ2 text input


def published_rows(choice: DataChoice) -> int | None:
    """The rows the dataset's latest PP release published (a released number), if any."""
    if choice.registry is None or choice.dataset is None:
        return None
    for r in reversed(choice.registry.releases(choice.dataset.name)):
        if r.tool == Tool.PP.value and r.kind is RunKind.RELEASE and r.artefact:
            art = artefact_of(r)
            if hasattr(art, "rows_published"):
                return int(art.rows_published)
    return None


def _carry(key: str, rho2: str) -> None:
    """Button callback: the settings' ρ2 becomes the planned one (and its kept shadow)."""
    st.session_state[key] = rho2
    persist(key)


def plan_step(choice: DataChoice, df: pd.DataFrame, s: PPSettings) -> None:
    """The Plan step (before Publish). Releases nothing; in analyst mode reads no SA value."""
    with plan_box("the (ρ1, ρ2) for the error you accept", "pp_plan_open") as is_open:
        if not is_open:
            return
        shape = _shape(choice, df, s)
        if shape is None:
            return
        c1, c2 = st.columns(2)
        target = c1.number_input(
            "Target error (± percentage points of each value's share)", min_value=0.01,
            max_value=99.0, step=0.5, persist_state="session",
            key=persist("pp_plan_target", 2.0),
        )  # fmt: skip
        confidence = c2.number_input(
            "Confidence", min_value=0.5, max_value=0.999, step=0.01, format="%.3f",
            persist_state="session", key=persist("pp_plan_conf", 0.95),
        )  # fmt: skip
        eps = float(st.session_state.get(PLAN_EPS_WIDGET, DEFAULT_PLAN_EPSILON))
        rho1, rho2 = s.rho_values
        r = PPPlanRequest(shape, float(target), float(confidence), eps, rho1, rho2)
        if st.button("Plan", key="pp_plan_run"):
            with queued("Planning…"):
                answer = PPAnswer(
                    r,
                    plan_pp(r.shape, r.rho1, r.rho2, r.plan_epsilon, r.confidence),
                    strictest_rho2(r.shape, r.rho1, r.error, r.plan_epsilon, r.confidence),
                    rho_frontier(r.shape, r.error, plan_epsilon=r.plan_epsilon,
                                 confidence=r.confidence),
                )  # fmt: skip
            state.put(ANSWER_KEY, answer, "the PP plan")
        answer: PPAnswer | None = state.current(ANSWER_KEY, PPAnswer, PPPlanRequest)
        if answer is None:
            return
        if answer.request.fingerprint() != r.fingerprint():
            st.info("The plan's inputs changed: press **Plan** to plan again.")
            return
        show_answer(choice, answer, float(target))


def show_answer(choice: DataChoice, a: PPAnswer, target: float) -> None:
    (st.success if a.current.feasible else st.warning)(in_app(a.current.describe()))
    best = a.strictest
    if best.rho2 is None:
        st.warning(
            f"No ρ2 below 1 meets ±{target:g} points at ρ1 = {best.rho1} on this table size."
        )
    else:
        st.markdown(
            f"**Loosest privacy meeting ±{target:g} points at ρ1 = {best.rho1}: ρ2 = {best.rho2}** "
            f"(expected error ±{best.plan.error * 100:.2g} points)."
        )
        st.button(
            f"Use ρ2 = {best.rho2}", key="pp_plan_use", on_click=_carry,
            args=(rho2_widget(choice), str(best.rho2)),
        )  # fmt: skip
    st.dataframe(frontier_frame(a.frontier), hide_index=True)
    cost = a.current.cost
    delta = f"/{cost.delta:g}" if cost.delta else ""
    st.caption(f"For a budget plan (Releases page): `pp:{cost.epsilon:g}{delta}`")


def frontier_frame(rows) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "ρ1": str(r.rho1),
                "smallest ρ2 meeting the target": "none" if r.rho2 is None else str(r.rho2),
                "expected error (points)": None if r.plan is None else r.plan.error * 100,
            }
            for r in rows
        ]
    )


def _shape(choice: DataChoice, df: pd.DataFrame, s: PPSettings) -> PPShape | None:
    """The planner's public basis: the categories and the table size."""
    owner = not is_analyst()
    default = ""
    if owner:  # the owner's own table: its values and size are the owner's to use
        default = ", ".join(str(v) for v in encode_sa(df[s.sa], missing=s.missing).counts())
    text = st.text_input(
        "The SA's public categories (comma-separated; the plan assumes an even spread)",
        persist_state="session", key=persist(f"pp_plan_cats_{choice.key}_{s.sa}", default),
    )  # fmt: skip
    cats = [c.strip() for c in text.split(",") if c.strip()]
    if owner:
        rows = len(df)
        st.caption(f"Table size: {rows:,} rows (the owner's table).")
    else:
        key = persist("pp_plan_rows", published_rows(choice))
        empty = {} if key in st.session_state else {"value": None}
        rows = st.number_input(
            "Table size to plan for (rows)", min_value=2, max_value=10**10, **empty,
            persist_state="session", key=key,
            help="Analyst mode does not read the table: give the size (prefilled with the rows "
            "an earlier PP release of this dataset published, when there is one).",
        )  # fmt: skip
    if len(cats) < 2 or not rows:
        st.info("Give the SA's public categories (at least two) and the table size to plan.")
        return None
    return PPShape.uniform(cats, int(rows))
