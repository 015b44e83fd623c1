"""HTF step by step (teaching view) for the location-histograms page: a tree-depth slider (and
Play) over the trace that `build_htf` itself records (core/spatial/htf_trace.py), each depth
told in plain sentences (core/spatial/htf_explain.py; the paper's wording one click away) and
drawn twice, side by side: on the grid (core/viz/htf_steps.py) and on the map
(core/viz/htf_map.py).

On a demo dataset it is a classroom (`teaching=True`): open from the start, seeded (the
sidebar's seed in demo mode, `TEACHING_SEED` otherwise) so every student sees the same steps,
charging nothing and releasing nothing. On the owner's own data it comes after a Build, with
the page's noise, when asked for.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pandas as pd
import streamlit as st
from streamlit_folium import st_folium

from core.privacy import SEEDED_LABEL, Accountant, Cost, Noise
from core.spatial.grid import Grid
from core.spatial.htf import build_htf
from core.spatial.htf_explain import explain_level
from core.spatial.htf_trace import HTFTrace
from core.spatial.service import HTFOptions
from core.spatial.unit import POINT, Unit
from core.viz.htf_map import level_map
from core.viz.htf_steps import STEP_HEIGHT_PX, level_figure, level_summary
from ui import pace, state
from ui.charts import show_chart
from ui.noise import DEFAULT_SEED
from ui.state import persist

STEPPER_TITLE = "HTF step by step (teaching view)"
TRACE_KEY = "lh_htf_trace"
LEVEL_KEY = "lh_step_level"
PLAY_KEY = "lh_step_play"
PACE_KEY = "lh_step_pace"
PENDING_KEY = "lh_step_pending"  # the next depth while playing (applied before the slider)
PLAY_SECONDS = 1.2  # Play's pace: its label and its clock (`ui.pace`) both read this
TEACHING_SEED = DEFAULT_SEED  # a demo's teaching view outside demo mode


def stepper_noise(noise: Noise, teaching: bool) -> Noise:
    """A fresh `Noise` for one traced build: seeded on a demo (the sidebar's seed, or the
    teaching seed in secure mode), the page's own mode otherwise."""
    if not noise.is_secure:
        return Noise.seeded(noise.seed)
    return Noise.seeded(TEACHING_SEED) if teaching else Noise.secure()


def _intro(noise: Noise, teaching: bool) -> None:
    if teaching:
        st.caption(
            f"**Teaching view** on a demo dataset: seeded noise (seed {noise.seed}; "
            f"{SEEDED_LABEL}), so every student with this seed sees the same steps. It charges "
            "no budget and releases nothing."
        )
        return
    st.caption(
        "Teaching view for you, the data owner: it shows the intermediate noisy values of one "
        "HTF build (all of them outputs of the noisy mechanisms), more detail than a release "
        "needs. It charges nothing. "
        + (
            "Demo mode: the same seed gives the same steps."
            if not noise.is_secure
            else "Secure mode: each build draws fresh noise."
        )  # fmt: skip
    )


def _trace(F, epsilon, htf: HTFOptions, noise: Noise, key, unit, teaching: bool) -> HTFTrace | None:
    """The kept trace for these data and parameters, built again only when they change (on a
    demo at once; otherwise when the owner asks)."""
    params = {k: v for k, v in asdict(htf).items() if v is not None}
    stamp = json.dumps([key, epsilon, params, noise.describe()], sort_keys=True, default=str)
    kept = state.get(TRACE_KEY)
    if kept is None or kept[0] != stamp:
        if not teaching and not st.button("Build HTF step by step", key="lh_step_build"):
            return None
        if teaching:  # a demo, seeded: the same steps for every student, built once per server
            trace = _classroom_trace(stamp, F, epsilon, params, noise, unit)
        else:
            trace = _build_trace(F, epsilon, params, noise, unit)
        kept = (stamp, trace)
        state.put(TRACE_KEY, kept, "the HTF step-by-step trace")
    return kept[1]


def _build_trace(F, epsilon, params, noise: Noise, unit) -> HTFTrace:
    trace = HTFTrace()
    build_htf(F, epsilon, Accountant(noise, Cost(epsilon)), trace=trace, unit=unit, **params)
    return trace


@st.cache_resource(max_entries=8, show_spinner=False)
def _classroom_trace(stamp: str, _F, _epsilon, _params, _noise: Noise, _unit) -> HTFTrace:
    """A demo's seeded trace, shared by every session of this server (read-only once built).
    `stamp` names everything it depends on: the demo and its binning (the page's parameters),
    ε, the HTF options and the seed; a demo's points are public teaching data."""
    assert not _noise.is_secure, "only a seeded trace is the same for everyone"
    return _build_trace(_F, _epsilon, _params, _noise, _unit)


def show_htf_stepper(
    F: np.ndarray, epsilon: float, htf: HTFOptions, noise: Noise, key: str, unit: Unit = POINT,
    grid: Grid | None = None, teaching: bool = False,
) -> None:  # fmt: skip
    """Build HTF with a trace (same code as the release) and show one depth at a time.

    `htf`: the sidebar's HTF options (typed; `build_htf` takes them all). `key` identifies the
    data and parameters (the page's request fingerprint); the trace is rebuilt only when it
    changes. With seeded noise the steps are reproducible for a class; in secure mode (the
    owner's own data) every rebuild draws fresh noise. `grid` (the public grid) puts each depth on the map too.
    """
    started = pace.clock()
    noise = stepper_noise(noise, teaching)
    _intro(noise, teaching)
    trace = _trace(F, epsilon, htf, noise, key, unit, teaching)
    if trace is None:
        return
    n = len(trace.levels)
    persist(LEVEL_KEY)  # the depth survives navigating away and back, and a reload
    if PENDING_KEY in st.session_state:  # a Play step: the next depth, and Play off at the last
        st.session_state[LEVEL_KEY], st.session_state[PLAY_KEY] = st.session_state.pop(PENDING_KEY)
    st.session_state[LEVEL_KEY] = min(max(int(st.session_state.get(LEVEL_KEY, 0)), 0), n - 1)
    playing = False
    index = 0
    if n > 1:
        c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
        index = c1.slider("Tree depth (0 = the whole area, before any cut)", 0, n - 1,
                          key=LEVEL_KEY)  # fmt: skip
        playing = c2.toggle(pace.play_label(PLAY_SECONDS, "depth"), key=PLAY_KEY)
        if playing:
            pace.pace_note(PACE_KEY, PLAY_SECONDS, "depth")
    _show_level(trace, index, F, grid)
    if playing and index < n - 1:  # advance after this depth is drawn, at the stated pace
        pace.wait_for_next(PACE_KEY, PLAY_SECONDS, started)
        st.session_state[PENDING_KEY] = (index + 1, index + 1 < n - 1)
        st.rerun()
    if not playing:
        pace.stop_playing(PACE_KEY)


def _show_level(trace: HTFTrace, index: int, F: np.ndarray, grid: Grid | None) -> None:
    """One depth: its sentences, then the grid figure and the map side by side (one 1280 x 720
    screen together), then the paper's wording, area by area, and the tables."""
    level = trace.levels[index]
    explained = explain_level(trace, index)
    with st.container(key="lh_step_text"):
        st.markdown(
            f"**{explained.title}**\n" + "\n".join(f"- {line}" for line in explained.summary)
        )
    figure = level_figure(trace, index, *F.shape)
    if grid is None:
        show_chart(st, figure, "lh_step_chart", width="stretch")
    else:
        left, right = st.columns(2)
        show_chart(left, figure, "lh_step_chart", width="stretch")
        with right, st.container(key="lh_step_map_box"):
            st_folium(
                level_map(trace, index, grid), height=STEP_HEIGHT_PX, use_container_width=True,
                returned_objects=[], key="lh_step_map",
            )  # fmt: skip
    with st.expander("In the paper's words (heights, Algorithm 1, noise scales)"):
        st.markdown("\n".join(f"- {line}" for line in explained.paper))
    with st.expander("Area by area", expanded=False):
        st.markdown("\n".join(f"- {line}" for line in explained.nodes))
        if explained.more:
            st.caption(f"… and {explained.more:,} more area(s), summarised above.")
    summary = level_summary(trace, level)
    st.dataframe(
        pd.DataFrame({"": list(summary), "value": [str(v) for v in summary.values()]}),
        hide_index=True,
    )
    if level.splits:
        rows = [
            {"area": s.node + 1, "axis": s.axis, "chosen offset": s.chosen,
             "candidates (offset: noisy score)": ", ".join(
                 f"{o}: {v:,.0f}" for o, v in zip(s.candidates, s.noisy_objective, strict=True))}
            for s in level.splits[:200]
        ]  # fmt: skip
        st.dataframe(pd.DataFrame(rows), hide_index=True)
