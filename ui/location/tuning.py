"""Tuning view for the location-histograms page (owner only, evaluation only): MRE against
epsilon per chosen method with error bars, and the smallest epsilon reaching an MRE target.
Computed by core/spatial/tuning.py, drawn by core/viz/tuning.py; nothing here is a release."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from core.errors import InputError
from core.privacy import Noise
from core.spatial.methods import LABELS
from core.spatial.tuning import MAX_POINTS, MIN_POINTS, epsilon_grid, tune
from core.viz.tuning import tuning_figure
from ui import state
from ui.actions import queued
from ui.location.request import LocationBuildRequest
from ui.shell import is_analyst
from ui.state import kept, persist

RESULT_KEY = "lh_tuning_result"
TUNING_KEY = ("data", "lat", "lon", "grid", "bbox", "htf", "person")  # what the curves are of
RAW_DATA_LABEL = (
    "**Evaluation only — uses the raw data; not differentially private.** Every point of these "
    "curves compares releases with the true counts, so this view is for you, the data owner, "
    "choosing ε before a release. It spends no budget and nothing here may leave your hands."
)


def show_tuning(F: np.ndarray, request: LocationBuildRequest, noise: Noise) -> None:
    """MRE-vs-ε curves for the request's methods on F and the smallest ε meeting a target
    (owner only).

    `request` is the page's typed build request; its data, columns, grid, bbox, HTF options and
    person column identify the curves, which are kept until those or a tuning setting change.
    In demo mode the seed makes the curves reproducible; in secure mode every run is fresh.
    """
    if is_analyst():  # fail closed: an analyst sees releases only, never raw-data evaluation
        st.info("The tuning view uses the raw data and is available to the data owner only.")
        return
    record = request.record()
    key = [record[k] for k in TUNING_KEY]
    methods = list(request.methods)
    st.warning(RAW_DATA_LABEL)
    c1, c2, c3 = st.columns(3)
    # every input keeps its value across a trip to another page and a reload (persist), so the
    # answer below stays the answer to the settings on screen
    lo = c1.number_input("Smallest ε", 0.001, 10.0, format="%.3f", key=persist("lh_tune_lo", 0.05))
    hi = c2.number_input("Largest ε", 0.002, 20.0, format="%.3f", key=persist("lh_tune_hi", 2.0))
    k = int(c3.number_input(f"ε values ({MIN_POINTS}–{MAX_POINTS})", MIN_POINTS, MAX_POINTS,
                            key=persist("lh_tune_k", 7)))  # fmt: skip
    c4, c5, c6 = st.columns(3)
    target = c4.number_input(
        "Target MRE", 0.001, 100.0, format="%.3f", key=persist("lh_tune_target", 0.1)
    )
    reps = int(c5.number_input("Repetitions", 2, 10, key=persist("lh_tune_reps", 3)))
    queries = int(
        c6.number_input("Queries per size", 50, 2000, step=50, key=persist("lh_tune_q", 300))
    )
    chosen = st.multiselect(
        "Methods on the curve", methods, format_func=lambda m: LABELS.get(m, m),
        key=kept("lh_tune_methods", methods, methods[:3]),
    )  # fmt: skip
    try:
        epsilons = epsilon_grid(float(lo), float(hi), k)
    except InputError as exc:
        st.error(str(exc))
        return
    stamp = json.dumps(
        [key, epsilons, target, reps, queries, chosen, noise.describe()], default=str
    )
    answer = state.get(RESULT_KEY)
    if st.button("Compute tuning curves", key="lh_tune_run", disabled=not chosen):
        bar = st.progress(0.0, text="tuning curves")
        try:
            with queued(None):
                result = tune(
                    F, chosen, epsilons, float(target), reps=reps, n_queries=queries,
                    seed=None if noise.is_secure else noise.seed,
                    progress=lambda f, t: bar.progress(min(max(f, 0.0), 1.0), text=t),
                    unit=request.unit,
                )  # fmt: skip
        except InputError as exc:
            bar.empty()
            st.error(str(exc))
            return
        bar.empty()
        answer = (stamp, result)
        state.put(RESULT_KEY, answer, "the tuning curves")
    if answer is None:
        st.caption(
            f"{len(chosen)} method(s) × {k} ε values × {reps} repetitions = "
            f"{len(chosen) * k * reps} builds. ε values: {', '.join(f'{e:g}' for e in epsilons)}."
        )
        return
    if answer[0] != stamp:
        st.warning(
            "These curves were computed with other settings than the ones above: press "
            "**Compute tuning curves** again for the current ones."
        )
    result = answer[1]
    st.plotly_chart(tuning_figure(result), width="stretch")
    rows = []
    for c in result.curves:
        s = c.smallest
        rows.append({
            "method": LABELS.get(c.method, c.method),
            f"smallest ε with MRE ≤ {result.target:g}": "—" if s.epsilon is None else f"{s.epsilon:.3g}",
            "how it was read": s.reach.value,
            "MRE at the largest ε": f"{c.points[-1].mre:.3g}",
        })  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(
        f"Mean overall MRE ± std over {result.reps} repetitions, {result.queries_per_size} "
        f"queries per size ({', '.join(f'{q:.0%}' for q in result.query_sizes)}), smoothing "
        f"{result.smoothing:g}; noise: {result.noise.get('mode', '')}. Read-off: the smallest ε "
        "from which the mean stays at or under the target at every larger ε measured, "
        "interpolated on the log-log curve. " + result.label
    )
