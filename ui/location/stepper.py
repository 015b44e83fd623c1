"""HTF step by step (teaching view) for the location-histograms page: a tree-depth slider (and
Play) over the trace that `build_htf` itself records (core/spatial/htf_trace.py), drawn by
core/viz/htf_steps.py and told in sentences by core/spatial/htf_explain.py.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import streamlit as st

from core.privacy import Accountant, Cost, Noise
from core.spatial.htf import build_htf
from core.spatial.htf_explain import explain_level
from core.spatial.htf_trace import HTFTrace
from core.spatial.unit import POINT, Unit
from core.viz.htf_steps import level_figure, level_summary
from ui import state
from ui.state import persist

TRACE_KEY = "lh_htf_trace"
LEVEL_KEY = "lh_step_level"
PLAY_KEY = "lh_step_play"
PENDING_KEY = "lh_step_pending"  # the next depth while playing (applied before the slider)
PLAY_SECONDS = 1.2


def show_htf_stepper(
    F: np.ndarray, epsilon: float, htf_params: dict, noise: Noise, key: str, unit: Unit = POINT
) -> None:
    """Build HTF with a trace (same code as the release) and show one level at a time.

    `key` identifies the data and parameters; the trace is rebuilt only when it changes. In demo
    mode the seed makes the steps reproducible for a class; in secure mode every rebuild draws
    fresh noise.
    """
    st.caption(
        "Teaching view for you, the data owner: it shows the intermediate noisy values of one "
        "HTF build (all of them outputs of the noisy mechanisms), more detail than a release "
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
        build_htf(
            F, epsilon, Accountant(step_noise, Cost(epsilon)), trace=trace, unit=unit, **params
        )
        kept = (stamp, trace)
        state.put(TRACE_KEY, kept, "the HTF step-by-step trace")
    trace = kept[1]
    n = len(trace.levels)
    persist(LEVEL_KEY)  # the depth survives navigating away and back, and a reload
    if PENDING_KEY in st.session_state:  # a Play step: the next depth, and Play off at the last
        st.session_state[LEVEL_KEY], st.session_state[PLAY_KEY] = st.session_state.pop(PENDING_KEY)
    st.session_state[LEVEL_KEY] = min(max(int(st.session_state.get(LEVEL_KEY, 0)), 0), n - 1)
    playing = False
    if n > 1:
        index = st.slider(
            f"Tree depth (0 = the root; depth d is height {trace.height} − d)",
            0, n - 1, key=LEVEL_KEY,
        )  # fmt: skip
        playing = st.toggle(
            f"▶ Play (one depth every {PLAY_SECONDS:g} s; stops at the last depth)", key=PLAY_KEY
        )
    else:
        index = 0
    level = trace.levels[index]
    explained = explain_level(trace, index)
    st.markdown(f"**{explained.title}**")
    st.markdown("\n".join(f"- {line}" for line in explained.summary))
    with st.expander("Node by node", expanded=len(level.nodes) <= 4):
        st.markdown("\n".join(f"- {line}" for line in explained.nodes))
        if explained.more:
            st.caption(f"… and {explained.more:,} more node(s), summarised above.")
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
    if playing and index < n - 1:  # advance after this depth is drawn (as PP's stepper does)
        time.sleep(PLAY_SECONDS)
        st.session_state[PENDING_KEY] = (index + 1, index + 1 < n - 1)
        st.rerun()
