"""HTF step by step (teaching view) for the location-histograms page: a level slider over the
trace that `build_htf` itself records (core/spatial/htf_trace.py), drawn by core/viz/htf_steps.py.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from core.privacy import BudgetLedger, Noise
from core.spatial.htf import build_htf
from core.spatial.htf_trace import HTFTrace
from core.viz.htf_steps import level_figure, level_summary
from ui import state
from ui.state import persist

TRACE_KEY = "lh_htf_trace"


def show_htf_stepper(
    F: np.ndarray, epsilon: float, htf_params: dict, noise: Noise, key: str
) -> None:
    """Build HTF with a trace (same code as the release) and show one level at a time.

    `key` identifies the data and parameters; the trace is rebuilt only when it changes. In demo
    mode the seed makes the steps reproducible for a class; in secure mode every rebuild draws
    fresh noise.
    """
    st.caption(
        "Teaching view for you, the data owner: it shows the intermediate noisy values of one "
        "HTF build (all of them outputs of the ledgered mechanisms), more detail than a release "
        "needs. "
        + (
            "Demo mode: the same seed gives the same steps."
            if not noise.is_secure
            else "Secure mode: each build draws fresh noise."
        )  # fmt: skip
    )
    params = {k: v for k, v in htf_params.items() if v is not None}
    stamp = json.dumps([key, epsilon, params, noise.describe()], sort_keys=True, default=str)
    kept = state.get(TRACE_KEY)
    if kept is None or kept[0] != stamp:
        if not st.button("Build HTF step by step", key="lh_step_build"):
            return
        trace = HTFTrace()
        step_noise = Noise.seeded(noise.seed) if not noise.is_secure else Noise.secure()
        build_htf(F, epsilon, step_noise, BudgetLedger(epsilon), trace=trace, **params)
        kept = (stamp, trace)
        state.put(TRACE_KEY, kept, "the HTF step-by-step trace")
    trace = kept[1]
    n = len(trace.levels)
    if st.session_state.get("lh_step_level", 0) > n - 1:
        st.session_state["lh_step_level"] = 0
    index = st.slider(
        "Level (tree height counts down to 0)", 0, n - 1, key=persist("lh_step_level", 0)
    )
    level = trace.levels[index]
    st.plotly_chart(level_figure(trace, index, *F.shape), width="stretch")
    summary = level_summary(trace, level)
    st.dataframe(
        pd.DataFrame({"": list(summary), "value": [str(v) for v in summary.values()]}),
        hide_index=True,
    )
    if level.splits:
        rows = [
            {"node": s.node, "axis": s.axis, "chosen offset": s.chosen,
             "candidates (offset: noisy objective)": ", ".join(
                 f"{o}: {v:,.0f}" for o, v in zip(s.candidates, s.noisy_objective, strict=True))}
            for s in level.splits[:200]
        ]  # fmt: skip
        st.dataframe(pd.DataFrame(rows), hide_index=True)
