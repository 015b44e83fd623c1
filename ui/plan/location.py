"""The location page's Plan step: from a target MRE to the ε each method needs.

MRE depends on the data's private shape, so a plan rests on a stated basis (`core.planning.shape`):
a new pilot (a PrivTree histogram, CHARGED as its own release through
`core.governance.planning.governed_pilot`, shown with its cost and confirmed like every charged
click), a pilot already recorded for this dataset (nothing charged), or a declared public size
and shape (nothing read, nothing charged). `core.planning.location.plan_location` then simulates
each method on synthetic point sets of that shape — the same call as `dpx plan release`. The
planned ε can be carried into the release step (the sidebar's ε and the methods).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import pandas as pd
import streamlit as st

from core.governance import Role
from core.governance.origin import Origin
from core.governance.planning import governed_pilot, recorded_pilot
from core.planning.location import EPSILONS, LocationPlan, plan_location
from core.planning.pilot import DEFAULT_PILOT_EPSILON, Pilot
from core.planning.pilot import TOOL as PILOT_TOOL
from core.planning.shape import DeclaredShape, PilotShape, ShapeKind
from core.privacy import Noise
from core.registry import RunKind, Status
from core.spatial.methods import LABELS, Door, location_method_names
from core.spatial.pipeline import Prepared
from ui import state
from ui.actions import queued
from ui.data import DataChoice
from ui.glossary import in_app
from ui.outcomes import (
    ChargePlan,
    charged,
    governed,
    open_registry,
    recorded_text,
    release_button,
    show_kept_outcome,
)
from ui.plan.common import plan_box
from ui.plan.location_request import (
    BasisKind,
    LocationPlanRequest,
    PilotData,
    PlanBasis,
)
from ui.shell import is_analyst
from ui.state import kept, persist

PILOT_KEY = "lh_plan_pilot"  # the session's pilot (kept: a reload keeps what was paid for)
ANSWER_KEY = "lh_plan_answer"
PLANNED_EPS = "lh_planned_eps"  # the planned ε carried into the sidebar's ε choices
EPS_WIDGET, METHODS_WIDGET = "lh_eps", "lh_methods"  # ui.location.inputs' widget keys
RECOMMENDED = "auto"


class Basis(StrEnum):
    NEW_PILOT = "A new pilot (charged: its own release)"
    RECORDED_PILOT = "A pilot already recorded for this dataset (nothing charged)"
    DECLARED = "A declared public size and shape (nothing read, nothing charged)"


@dataclass(frozen=True)
class KeptPilot:
    """This session's pilot, the data it was drawn on and what the registry recorded."""

    data: PilotData
    pilot: Pilot
    recorded: str


@dataclass(frozen=True)
class KeptPlan:
    """A plan with the inputs it was made from (shown only while they are unchanged)."""

    request: LocationPlanRequest
    plan: LocationPlan


def planned_epsilon_choices(choices: list[float]) -> list[float]:
    """The sidebar's ε choices plus a planned ε carried into the release step."""
    persist(PLANNED_EPS)
    planned = st.session_state.get(PLANNED_EPS)
    return sorted({*choices, planned}) if planned else list(choices)


def carry(epsilon: float, method: str) -> None:
    """Button callback (runs before the next run draws the sidebar): the release step's ε and
    methods become the plan's."""
    st.session_state[PLANNED_EPS] = epsilon
    st.session_state[EPS_WIDGET] = epsilon
    st.session_state[METHODS_WIDGET] = [method]
    for key in (PLANNED_EPS, EPS_WIDGET, METHODS_WIDGET):  # their shadows too: a reload right
        persist(key)  # after this click brings the carried values back


def plan_step(choice: DataChoice, prep: Prepared, columns, noise: Noise, methods: list[str]):
    """The Plan step (drawn before Build). Privacy: the only release here is the pilot, whose
    claim is `measure_pilot`'s (PrivTree at the pilot's ε for the page's unit), charged before
    the binned counts are read; everything else reads released values or public facts only."""
    with plan_box("the ε for the accuracy you need", "lh_plan_open") as is_open:
        if not is_open:
            return
        shape, basis = _basis(choice, prep, columns, noise)
        if shape is None:
            return
        c1, c2 = st.columns([1, 2])
        target = c1.number_input(
            "Target MRE", min_value=0.001, max_value=100.0, step=0.01, format="%.3f",
            persist_state="session", key=persist("lh_plan_target", 0.1),
            help="Mean relative error of random range queries (2, 6 and 10 % of the box).",
        )  # fmt: skip
        options = list(location_method_names(Door.PLAN))  # Recommended (auto) first
        chosen = c2.multiselect(
            "Methods to plan", options, format_func=lambda m: LABELS.get(m, m),
            persist_state="session", key=kept("lh_plan_methods", options, _defaults(methods)),
        )  # fmt: skip
        if not chosen:
            st.info("Pick at least one method to plan.")
            return
        request = LocationPlanRequest(
            basis, float(target), tuple(chosen), prep.grid.ny, prep.grid.nx
        )
        if st.button("Plan", key="lh_plan_run"):
            with queued("Simulating releases on synthetic point sets…"):
                plan = plan_location(shape, chosen, float(target), unit=_unit(shape, prep))
            state.put(ANSWER_KEY, KeptPlan(request, plan), "the location plan")
        kept_plan: KeptPlan | None = state.current(ANSWER_KEY, KeptPlan, LocationPlanRequest)
        if kept_plan is None:
            return
        if kept_plan.request.fingerprint() != request.fingerprint():
            st.info("The plan's inputs changed: press **Plan** to plan again.")
            return
        show_plan(kept_plan.plan)


def show_plan(plan: LocationPlan) -> None:
    """The answer: one row per method, the one-sentence answer and basis, and the carry button."""
    st.success(in_app(plan.describe()))
    st.dataframe(plan_frame(plan), hide_index=True, key="lh_plan_table", column_config=PLAN_COLUMNS)
    st.caption(
        "Measured on point sets the planner never saw (docs/benchmarks/plan_calibration.md): "
        "the realised MRE fell inside [low, high] in 55 of 56 cases, but real place data came "
        "out about 1.25–1.3× the mid and dense road-like data about 1.8×. The high assumes "
        "rough data (sparse areas empty, points along lines) and can be far above what a "
        "release reaches; the cautious ε meets the target even then."
    )
    if plan.best is not None:
        st.caption(
            "For a budget plan (Releases page): "
            f"`location:{plan.best.epsilon:g}:method={plan.best.method}`"
        )
    for m in plan.methods:
        if m.epsilon is None:
            continue
        st.button(
            f"Use ε {m.epsilon:g} with {m.label} in the release step",
            key=f"lh_plan_use_{m.method}", on_click=carry, args=(m.epsilon, m.method),
        )  # fmt: skip


# Short headers, the meaning on hover: the whole table fits a 1280 px screen (issue 32: its
# "cautious ε" column was off-screen there).
PLAN_COLUMNS = {
    "method": st.column_config.TextColumn("method", width="medium"),
    "planned ε": st.column_config.NumberColumn(
        "planned ε", help="the smallest ε whose predicted MRE (mid) meets the target"
    ),
    "MRE low": st.column_config.NumberColumn("MRE low", format="%.3g",
                                             help="predicted MRE: the optimistic end"),
    "MRE mid": st.column_config.NumberColumn("MRE mid", format="%.3g", help="predicted MRE"),
    "MRE high": st.column_config.NumberColumn(
        "MRE high", format="%.3g",
        help="predicted MRE for rough data (sparse areas empty, points along lines): pessimistic",
    ),
    "cautious ε": st.column_config.NumberColumn(
        "cautious ε", help="the ε whose pessimistic (high) MRE still meets the target"
    ),
    "reached": st.column_config.TextColumn("reached"),
}  # fmt: skip


def plan_frame(plan: LocationPlan) -> pd.DataFrame:
    rows = []
    for m in plan.methods:
        low, mid, high = m.predicted.as_list() if m.predicted else (None, None, None)
        rows.append(
            {
                "method": m.label,
                "planned ε": m.epsilon,
                "MRE low": low,
                "MRE mid": mid,
                "MRE high": high,
                "cautious ε": m.cautious_epsilon,
                "reached": "yes" if m.epsilon is not None else f"no (up to ε {EPSILONS[-1]:g})",
            }
        )
    return pd.DataFrame(rows, columns=list(PLAN_COLUMNS))


def _defaults(methods: list[str]) -> list[str]:
    return [m for m in methods if m in LABELS] or [RECOMMENDED]


def _unit(shape, prep: Prepared):
    return shape.pilot.unit if isinstance(shape, PilotShape) else prep.unit


def _basis(choice: DataChoice, prep: Prepared, columns, noise: Noise):
    """The chosen basis as a `Shape` (None while a pilot is still to be drawn) and its key."""
    bases = list(Basis) if choice.dataset is not None else [Basis.NEW_PILOT, Basis.DECLARED]
    basis = st.radio(
        "What the plan rests on", bases, persist_state="session",
        key=kept("lh_plan_basis", bases, Basis.NEW_PILOT),
        help="The MRE a release reaches depends on the data's shape, which is private: a plan "
        "rests on a small DP pilot, or on a size and shape you declare.",
    )  # fmt: skip
    grid = (prep.grid.ny, prep.grid.nx)
    if basis is Basis.DECLARED:
        c1, c2 = st.columns(2)
        n = c1.number_input(
            "Declared number of points (public)", min_value=10, max_value=100_000_000,
            step=1000, persist_state="session", key=persist("lh_plan_public_n", 10_000),
        )  # fmt: skip
        kind = c2.radio(
            "Declared shape", list(ShapeKind), horizontal=True, persist_state="session",
            key=kept("lh_plan_shape", list(ShapeKind), ShapeKind.CITY),
        )  # fmt: skip
        shape = DeclaredShape(int(n), ShapeKind(kind), *grid)
        return shape, PlanBasis(
            BasisKind.DECLARED, declared_n=int(n), declared_shape=str(kind)
        )
    if basis is Basis.RECORDED_PILOT:
        return _recorded(choice, grid, prep.grid.bbox)
    return _new_pilot(choice, prep, columns, noise, grid)


def _same_box(artefact: dict, grid: tuple[int, int], bbox) -> bool:
    """A recorded pilot fits when it is on this grid and this public bounding box."""
    box = artefact.get("bbox")
    same_grid = (artefact.get("rows"), artefact.get("cols")) == grid
    return same_grid and box is not None and np.allclose(box, bbox, rtol=0, atol=1e-9)


def _recorded(choice: DataChoice, grid, bbox):
    registry, name = choice.registry, choice.dataset_name
    pilots = [
        r for r in registry.releases(name)
        if r.tool == PILOT_TOOL and r.artefact and r.status is Status.RELEASED
        and r.kind is RunKind.RELEASE and _same_box(r.artefact, grid, bbox)
    ]  # fmt: skip
    if not pilots:
        st.info(
            f"No pilot of dataset {name} on this {grid[0]} × {grid[1]} grid and bounding box is "
            "recorded yet: draw a new one (charged) or declare a size and shape."
        )
        return None, None
    ids = [r.id for r in reversed(pilots)]
    by_id = {r.id: r for r in pilots}
    rid = st.selectbox(
        "Recorded pilot", ids, persist_state="session", key=kept("lh_plan_pilot_id", ids),
        format_func=lambda i: f"#{i} · ε {by_id[i].epsilon:g} · {by_id[i].time}",
    )  # fmt: skip
    pilot = recorded_pilot(registry, int(rid), name)
    st.caption(f"Rests on {in_app(pilot.describe())}; nothing is charged again.")
    return PilotShape(pilot), PlanBasis(BasisKind.RECORDED_PILOT, release_id=int(rid))


def _new_pilot(choice: DataChoice, prep: Prepared, columns, noise: Noise, grid):
    """Draw (charged) or reuse this session's pilot for this data and grid."""
    kept_pilot: KeptPilot | None = state.get(PILOT_KEY)
    if kept_pilot is not None and not isinstance(kept_pilot.data, PilotData):
        state.drop(PILOT_KEY)  # kept by an older page version: its data were a tuple
        kept_pilot = None
    data = _data_of(choice, columns, prep)
    pilot = None if kept_pilot is None else kept_pilot.pilot
    fits = (
        pilot is not None
        and pilot.shape == grid
        and kept_pilot.data.fingerprint() == data.fingerprint()
    )
    eps = st.number_input(
        "Pilot ε (charged to the data, as its own release)", min_value=0.01, max_value=2.0,
        step=0.05, persist_state="session", key=persist("lh_plan_pilot_eps", DEFAULT_PILOT_EPSILON),
    )  # fmt: skip
    plan = ChargePlan.of(
        choice.registry, choice.dataset, float(eps), seeded=not noise.is_secure,
        note="The pilot is a PrivTree histogram; the plan reads only its released counts.",
    )  # fmt: skip
    if release_button("Draw the pilot", plan, key="lh_plan_pilot_run"):
        _draw(choice, prep, columns, noise, float(eps))
        kept_pilot = state.get(PILOT_KEY)
        pilot = None if kept_pilot is None else kept_pilot.pilot
        fits = pilot is not None
    show_kept_outcome("lh_plan")
    if not fits:
        st.info("Draw a pilot (charged) to plan on this data, or choose another basis.")
        return None, None
    st.markdown(kept_pilot.recorded)
    st.caption(f"The plan rests on {in_app(pilot.describe())}.")
    basis = PlanBasis(
        BasisKind.NEW_PILOT, release_id=pilot.release_id, epsilon=pilot.epsilon, data=data
    )
    return PilotShape(pilot), basis


def _data_of(choice: DataChoice, columns, prep: Prepared) -> PilotData:
    """What a pilot was drawn on: the data, its columns, the unit and the public box."""
    box = tuple(float(v) for v in prep.grid.bbox)
    return PilotData(choice.key, columns.lat, columns.lon, columns.person, columns.per_person, box)


def _draw(choice: DataChoice, prep: Prepared, columns, noise: Noise, eps: float) -> None:
    """The pilot as a governed release: charged to the dataset before the counts are read."""
    state.drop(PILOT_KEY, ANSWER_KEY)
    registry = choice.registry if choice.dataset is not None else open_registry()
    grid = prep.grid
    role = Role.ANALYST if is_analyst() else Role.OWNER
    door = Origin.app(
        state.session_id(), data=choice.key, seed=noise.seed, grid=[grid.ny, grid.nx],
        grid_cols=grid.nx, bbox=list(grid.bbox), lat=columns.lat, lon=columns.lon,
        mode=noise.mode, role=role.value,
        person=[columns.person, columns.per_person] if columns.person else None,
    )  # fmt: skip
    with governed("Draw the pilot", key="lh_plan"):
        with queued("Drawing the pilot…"):
            got = governed_pilot(
                registry, role, choice.dataset, noise, door, eps, prep.unit,
                lambda _noise: (prep.F, grid.bbox),
            )  # fmt: skip
        kept_pilot = KeptPilot(
            _data_of(choice, columns, prep),
            got.result,
            recorded_text(got.record, "Pilot", registry),
        )
        state.put(PILOT_KEY, kept_pilot, "the location pilot")
        if got.record is not None:
            state.mark_shown([got.record.id])
        charged(choice.dataset)
