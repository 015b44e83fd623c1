"""The location page's evaluation step (owner only): the MRE of the charged releases and of
evaluation-only rebuilds against the raw data. What the rebuilds would cost is shown as
evaluation cost: never released, never charged. Not differentially private."""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core.spatial.evaluate import EVALUATION_LABEL
from core.spatial.releases import Evaluation, evaluate
from core.viz.spatial import method_label, mre_chart
from ui import state
from ui.actions import queued
from ui.downloads import download
from ui.location.release import EVAL_KEY, Build
from ui.state import persist


@dataclass(frozen=True)
class EvaluationSettings:
    """The evaluation expander's values: query sizes (area fractions), queries per size,
    repetitions and the MRE's smoothing."""

    query_sizes: tuple[float, ...]
    queries: int
    reps: int
    smoothing: float


@dataclass(frozen=True)
class Scored:
    """An evaluation of one build (owner only; not differentially private)."""

    build_json: str  # the build's fingerprint (`LocationBuildRequest.fingerprint`)
    settings: EvaluationSettings  # the evaluation settings it used
    evaluation: Evaluation


def run_evaluation(b: Build, F: np.ndarray, ev: EvaluationSettings, seed: int | None) -> Scored:
    """Score the build's charged releases against F (owner only; charges nothing)."""
    with (
        queued(None),
        st.status("Evaluating — evaluation only, uses the raw data…", expanded=True) as status,
    ):
        bar = st.progress(0.0)
        evaluation = evaluate(
            list(b.charged),
            F,
            sizes=ev.query_sizes,
            n_queries=ev.queries,
            reps=ev.reps,
            smoothing=ev.smoothing,
            seed=seed,
            htf=b.request.htf,
            progress=lambda f, text: bar.progress(min(f, 1.0), text=text),
            unit=b.request.unit,
        )
        status.update(label="Evaluation done", state="complete", expanded=False)
    return Scored(b.fingerprint, ev, evaluation)


def evaluation_table(scored: Scored) -> pd.DataFrame:
    df = pd.DataFrame(scored.evaluation.table())
    return df.assign(method=df["method"].map(method_label))


def show_evaluation(
    b: Build, F: np.ndarray, ev: EvaluationSettings, seed: int | None, stale_build: bool
) -> None:
    """Owner-only section: the Evaluate button and the last evaluation of this build."""
    st.subheader("Evaluate (owner only)")
    st.caption(
        f"MRE — {EVALUATION_LABEL}. Scores the charged releases above against the raw points, "
        "plus evaluation-only rebuilds of each method (error bars); nothing here is released."
    )
    if st.button(
        "Evaluate the releases (evaluation only — uses raw data)",
        key="lh_eval",
        disabled=stale_build,
        help="Rebuild the releases first: the parameters changed." if stale_build else None,
    ):
        state.drop(EVAL_KEY)
        state.put(EVAL_KEY, run_evaluation(b, F, ev, seed), "the evaluation")
    scored: Scored | None = state.get(EVAL_KEY)
    if scored is None or scored.build_json != b.fingerprint:
        st.info("Press **Evaluate** to score these releases (evaluation only).")
        return
    if scored.settings != ev:
        st.warning(
            "The evaluation below used **other evaluation settings** than the ones above. "
            "Press **Evaluate** again to use the current ones."
        )
    e = scored.evaluation
    st.dataframe(evaluation_table(scored), hide_index=True, key="lh_eval_table")
    st.plotly_chart(mre_chart(e.comparison.rows), key="lh_mre")
    st.info(
        f"Evaluation cost: {e.comparison.settings.reps} rebuild(s) per method used "
        f"ε = {e.evaluation_epsilon:g} in total. Evaluation only — never released and not "
        "charged to any budget; the spend above counts only the charged releases."
    )
    buf = io.StringIO()
    pd.DataFrame(e.comparison.rows).to_csv(buf, index=False)
    download(
        st, "MRE CSV (evaluation only)", buf.getvalue(), "mre-evaluation-only.csv", "text/csv",
        key="lh_dl_mre",
    )  # fmt: skip


def evaluation_settings() -> EvaluationSettings | None:
    """The evaluation settings (an expander); None when no query size is chosen."""
    with st.expander("Evaluation settings (MRE uses the raw data: evaluation only)"):
        e1, e2, e3, e4 = st.columns(4)
        n_queries = e1.number_input(
            "Queries per size", 10, 5000, step=100, persist_state="session",
            key=persist("lh_q", 500),
        )  # fmt: skip
        sizes = e2.multiselect(
            "Query sizes", [0.02, 0.06, 0.10], persist_state="session",
            key=persist("lh_sizes", [0.02, 0.06, 0.10]),
        )  # fmt: skip
        reps = e3.number_input(
            "Repetitions", 1, 10, persist_state="session", key=persist("lh_reps", 3)
        )
        smoothing = e4.number_input(
            "Smoothing s", 0.0, 1e6, persist_state="session", key=persist("lh_smooth", 20.0)
        )
    if not sizes:
        st.info("Pick at least one query size to evaluate.")
        return None
    return EvaluationSettings(
        tuple(sorted(float(f) for f in sizes)), int(n_queries), int(reps), float(smoothing)
    )
