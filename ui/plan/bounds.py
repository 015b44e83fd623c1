"""The DP SQL page's bounds helper: contribution bounds for a numeric column that are not
guessed, the same charged release as `dpx plan bounds` (`core.governance.planning.governed_bounds`).

A DP SUM or AVG needs bounds on each unit's contribution. Reading them off the data would leak
it, so the helper spends a small ε of its own — a governed release of tool "bounds", charged to
the dataset before any value is read, in owner and analyst mode alike — on a DP log-histogram of
each unit's sum (or mean) of the column, and proposes the narrowest bounds that clip at most the
chosen share of units. The proposal, its estimated clipped share and the budget-plan line are
kept for the session; the query's bounds are the person's to write.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.data.declared import ColumnType
from core.governance.origin import Origin
from core.governance.planning import governed_bounds
from core.planning.bounds import (
    DEFAULT_CLIP_SHARE,
    DEFAULT_EPSILON,
    STATISTICS,
    unit_values,
    unit_values_in_place,
)
from core.privacy import Noise, PrivacyUnit
from core.registry import Claim
from ui import state
from ui.data import DataChoice
from ui.outcomes import (
    ChargePlan,
    charged,
    governed,
    open_registry,
    recorded_text,
    release_button,
    show_kept_outcome,
)
from ui.shell import role
from ui.sql.request import BoundsRequest
from ui.sql.tables import SqlData
from ui.state import kept, persist

KEY = "dpsql_bounds"
RESULT = "dpsql_bounds_result"


@dataclass(frozen=True)
class KeptBounds:
    """A bounds release shown to this session: what it was drawn on, its proposal (as JSON, the
    registry's artefact) and what the registry recorded."""

    request: BoundsRequest
    proposal: dict
    recorded: str


def numeric_columns(data: SqlData) -> list[str]:
    """`table.column` for each numeric column of the private tables (the schema is public)."""
    out = []
    for name in data.private:
        for fact in data.catalog.get(name).schema.columns:
            column = fact.name
            numeric = fact.type in (ColumnType.INTEGER, ColumnType.FLOAT)
            if numeric and str(column) != data.uid:
                out.append(f"{name}.{column}")
    return out


def bounds_step(choice: DataChoice, data: SqlData, noise: Noise) -> None:
    """Propose bounds for one numeric column: a charged release (stated before the click)."""
    with st.expander(
        "Plan · bounds for a SUM or AVG (a charged release)", key=persist(f"{KEY}_open", False),
        on_change="rerun",
    ) as box:  # fmt: skip
        if not box.open:
            return
        columns = numeric_columns(data)
        if not columns:
            st.info("The private tables have no numeric column to bound.")
            return
        c1, c2, c3, c4 = st.columns([2, 1, 1, 1])
        target = c1.selectbox(
            "Column", columns, persist_state="session", key=kept(f"{KEY}_column", columns)
        )
        statistic = c2.radio(
            "Per unit", STATISTICS, horizontal=True, persist_state="session",
            key=persist(f"{KEY}_statistic", STATISTICS[0]),
        )  # fmt: skip
        epsilon = c3.number_input(
            "ε (charged)", min_value=0.01, max_value=2.0, step=0.05, persist_state="session",
            key=persist(f"{KEY}_eps", DEFAULT_EPSILON),
        )  # fmt: skip
        clip = c4.number_input(
            "Share clipped", min_value=0.001, max_value=0.5, step=0.005, format="%.3f",
            persist_state="session", key=persist(f"{KEY}_clip", DEFAULT_CLIP_SHARE),
        )  # fmt: skip
        st.caption(
            "Each unit's sum (or mean) of the column goes into a log-scale histogram with "
            "discrete Laplace noise (one unit changes one bin by one). The proposed bounds are "
            "the narrowest that leave at most the chosen share of units outside."
        )
        request = BoundsRequest.of(data, target, statistic, epsilon, clip)
        plan = ChargePlan.of(
            choice.registry, choice.dataset, float(epsilon), seeded=not noise.is_secure,
            note="The bounds are a release of their own (tool 'bounds').",
        )  # fmt: skip
        if release_button("Propose bounds", plan, key=f"{KEY}_run"):
            _draw(choice, data, noise, request)
        show_kept_outcome(KEY)
        _show(state.current(RESULT, KeptBounds, BoundsRequest), request)


def _draw(choice: DataChoice, data: SqlData, noise: Noise, request: BoundsRequest) -> None:
    """The governed bounds release: ε charged before the column is read."""
    state.drop(RESULT)
    r = request
    registry = choice.registry if choice.dataset is not None else open_registry()
    unit = None if data.row_is_unit else data.uid
    claim = Claim.of(PrivacyUnit.declared(unit, data.row_is_unit))
    door = Origin.app(state.session_id(), data=choice.key, seed=noise.seed, table=r.table,
                    role=role().value)  # fmt: skip
    with governed("Propose bounds", key=KEY):
        got = governed_bounds(
            registry, role(), choice.dataset, noise, door, r.epsilon, claim,
            lambda: _unit_values(data, r.table, r.column, unit, r.statistic),
            column=r.column, statistic=r.statistic, scale=1.0, clip_share=r.clip_share,
        )  # fmt: skip
        recorded = recorded_text(got.record, "Bounds", registry)
        state.put(RESULT, KeptBounds(r, got.result.to_json(), recorded), "the bounds")
        if got.record is not None:
            state.mark_shown([got.record.id])
        charged(choice.dataset)


def _unit_values(data: SqlData, table: str, column: str, unit: str | None, statistic: str):
    """One value per unit, from the table's frame or, read in place (an upload), by the engine
    where the file lies."""
    spec = data.catalog.get(table)
    if spec.in_place:
        return unit_values_in_place(spec.source, spec.declared, column, unit, statistic)
    return unit_values(spec.frame, column, unit, statistic)


def _show(got: KeptBounds | None, request: BoundsRequest) -> None:
    if got is None:
        return
    if got.request.fingerprint() != request.fingerprint():
        st.info("The column or the settings changed: these bounds were drawn for other ones.")
    p = got.proposal
    st.success(p["describe"])
    st.markdown(got.recorded)
    aggregate = "ANON_SUM" if p["statistic"] == "sum" else "ANON_AVG"
    st.caption(
        f"In the query: {aggregate}({p['column']}, {p['lower']:g}, {p['upper']:g}) — for a "
        f"budget plan (Releases page): `bounds:{p['epsilon']:g}`."
    )
