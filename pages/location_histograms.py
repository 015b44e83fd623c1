"""Location histograms: build DP spatial histograms (HTF and baselines), map them, compare MRE.

Steps: choose data → columns and grid → public bounding box → methods → **Build releases**
(charged: `ui.location.release.build_step`, the one place this page releases) → the releases
on the map with their downloads → (owner only) Evaluate, Tuning and the HTF stepper, which use
the raw data and release nothing. On a demo dataset the HTF stepper is a classroom: open before
any Build, seeded, charging nothing (`ui.location.stepper`). Analyst mode (`DPX_MODE=analyst`): registered datasets only,
no counts of raw points, no evaluation, tuning, teaching view or seeded noise, and binning
that never refuses on the values.
"""

from __future__ import annotations

import streamlit as st

from core.privacy import PrivacyUnit
from core.spatial.export import DEMO_BBOX_LABEL
from ui import state
from ui.data import DemoKind, Source, choose_data
from ui.glossary import in_app
from ui.location.evaluation import evaluation_settings, show_evaluation
from ui.location.inputs import (
    bin_points,
    choose_bbox,
    choose_columns,
    choose_methods,
    sidebar_parameters,
)
from ui.location.params import all_location_params
from ui.location.release import BUILD_KEY, EVAL_KEY, TOOL, Build, build_step, prepare_all
from ui.location.request import LocationBuildRequest
from ui.location.results import show_results
from ui.location.selection import BENCHMARKS_LINE
from ui.location.stepper import STEPPER_TITLE, show_htf_stepper
from ui.location.tuning import show_tuning
from ui.noise import current_noise
from ui.outcomes import (
    ChargePlan,
    release_button,
    show_kept_outcome,
    show_not_shown,
    user_errors,
)
from ui.plan.location import plan_step
from ui.shell import is_analyst, page_setup
from ui.state import persist


def describe_grid(prep, person: str | None, unit: PrivacyUnit) -> None:
    grid = prep.grid
    if prep.bbox_from_data:
        st.warning(DEMO_BBOX_LABEL)
    where = f"Grid {grid.ny} × {grid.nx} over bbox {[round(v, 5) for v in grid.bbox]}."
    if not is_analyst():
        where += (
            f" For you as the data owner only (not released): {prep.n_used:,} points inside, "
            f"{prep.n_dropped:,} outside or without coordinates"
            + (f", {prep.n_capped:,} left out by the per-person bound." if person else ".")
        )
    st.caption(f"Privacy unit: {in_app(unit.words())}.")  # the claim's words (core.privacy)
    st.caption(where)


def build_button(choice, prepared, request: LocationBuildRequest, prep, noise) -> None:
    """What Build will charge (the prepared releases' costs, added up: basic composition), the
    analyst's confirmation, and the build itself."""
    total = sum(p.cost.epsilon for p in prepared)
    plan = ChargePlan.of(
        choice.registry, choice.dataset, total, releases=len(prepared), seeded=not noise.is_secure
    )
    if release_button("Build releases", plan, key="lh_run"):
        build_step(choice, prepared, request, prep)
    show_kept_outcome("lh")


def owner_views(result: Build, prep, request: LocationBuildRequest, noise, teaching: bool):
    """Evaluation, tuning and the HTF stepper: they use the raw data; nothing is released."""
    settings = evaluation_settings()
    if settings is not None:
        with user_errors():
            show_evaluation(
                result, prep.F, settings, noise.seed,
                stale_build=result.fingerprint != request.fingerprint(),
            )  # fmt: skip
    with st.expander(
        "Tuning: MRE against ε (uses the raw data: evaluation only)",
        key=persist("lh_tune_open", False), on_change="rerun",
    ) as box:  # fmt: skip
        if box.open:
            show_tuning(prep.F, request, noise)
    if not teaching:  # a demo's stepper is above, before any Build
        stepper_box(prep, request, noise, teaching=False)


def stepper_box(prep, request: LocationBuildRequest, noise, teaching: bool) -> None:
    """The HTF stepper in a keyed expander (it keeps its state and works only when open); on a
    demo dataset it is open from the start."""
    with st.expander(
        STEPPER_TITLE + (" — seeded, charges nothing" if teaching else ""),
        key=persist("lh_step_open" if not teaching else "lh_teach_open", teaching),
        on_change="rerun",
    ) as box:  # fmt: skip
        if box.open:
            show_htf_stepper(
                prep.F, request.epsilon, request.htf, noise, request.fingerprint(), prep.unit,
                grid=prep.grid, teaching=teaching,
            )  # fmt: skip


page_setup()
st.title("Location histograms")
st.caption(
    "Differentially private 2-D histograms of latitude/longitude points with HTF "
    "(Shaham et al., SIGSPATIAL 2021), compared with grid and tree baselines."
)
noise = current_noise()  # analyst mode: always secure
epsilon, htf = sidebar_parameters()

with user_errors():
    choice = choose_data("lh", DemoKind.POINTS, upload_help="one point per row, lat/lon columns")
    show_not_shown(choice, [TOOL], key="lh")
    df = choice.one_table("location histograms")
    columns = choose_columns(choice, df)
    bbox, from_data = choose_bbox(choice, noise.is_secure)
    methods = choose_methods()
    st.caption(BENCHMARKS_LINE)
    # the widgets as typed LocationParams, every check that needs no data made before binning
    asked = all_location_params(epsilon, htf, methods, columns, bbox, from_data)
    prepared = prepare_all(asked, choice.dataset)
    prep = bin_points(choice, df, columns, bbox, from_data, noise.seed)
    describe_grid(prep, columns.person, prepared[0].unit)
    # the page's state, typed (ui.location.request): what Build, results, evaluation, tuning
    # and the stepper are given, and whose fingerprint tells a kept result stale
    request = LocationBuildRequest.of(
        epsilon, htf, methods, columns, bbox, from_data, prep.grid, choice.key, noise
    )

teaching = choice.source is Source.DEMO and not is_analyst()  # a classroom: no budget needed
if teaching:
    stepper_box(prep, request, noise, teaching=True)
plan_step(choice, prep, columns, noise, methods)
build_button(choice, prepared, request, prep, noise)

result: Build | None = state.get(BUILD_KEY)
if result is not None and not isinstance(getattr(result, "request", None), LocationBuildRequest):
    state.drop(BUILD_KEY, EVAL_KEY)  # kept (on disk) by an older page without the typed request
    result = None
if result is None:
    st.info("Set the parameters, then press **Build releases**.")
    st.stop()
show_results(result, df, request, owner=not is_analyst())
if not is_analyst():  # no evaluation, tuning or teaching view on raw data in analyst mode
    owner_views(result, prep, request, noise, teaching)
