"""The noise mode: secure releases, or the reproducible (seeded) demo mode a class can share.

One sidebar switch for every page (`mode_sidebar`, drawn by the app shell); pages ask for the
`Noise` with `current_noise()` and show the mode with `show_mode(noise)`. Analyst mode never
offers the switch: `current_noise()` is then always secure.
"""

from __future__ import annotations

import zlib

import numpy as np
import streamlit as st

from core.governance import Role, current_role
from core.privacy import SEEDED_LABEL, Noise
from ui.state import persist

MODE_KEY = "dpx_demo_mode"
SEED_KEY = "dpx_demo_seed"
DEFAULT_SEED = 42


def mode_sidebar() -> None:
    """Sidebar switch between secure releases and reproducible demo mode (shared by all pages)."""
    with st.sidebar:
        st.toggle(
            "Reproducible demo mode",
            key=persist(MODE_KEY, False),
            help="Seeded noise so a class sees the same numbers twice. Not for real releases.",
        )
        if st.session_state.get(MODE_KEY):
            seed_input()
            st.warning(f"Seeded noise: {SEEDED_LABEL}.")
        else:
            st.success("Secure mode: noise from OpenDP, never seeded.")


def seed_input() -> None:
    """The seed box. The seed lives under `SEED_KEY`, a plain (non-widget) value kept across
    reloads, and the box is drawn from it each time. The box is not keyed: Streamlit drops a
    keyed widget's state whenever the box is hidden (demo mode off), and bringing it back
    through the widget's own state raced with reruns under load (a browser test saw the seed
    come back as the box's minimum, 0, after demo mode off and on)."""
    persist(SEED_KEY, DEFAULT_SEED)
    seed = st.number_input("Seed", min_value=0, step=1, value=int(st.session_state[SEED_KEY]))
    st.session_state[SEED_KEY] = int(seed)
    persist(SEED_KEY)  # its kept copy too: a reload right after keeps the new seed


def current_noise(purpose: str = "release") -> Noise:
    """The `Noise` the sidebar asks for (a fresh seeded generator per call in demo mode).

    In demo mode, a `purpose` other than "release" (e.g. "evaluation") gets its own stream
    derived from the seed, so evaluation draws never repeat the release's noise. Analyst mode:
    always secure."""
    if current_role() is Role.ANALYST or not st.session_state.get(MODE_KEY):
        return Noise.secure()
    seed = int(st.session_state.get(SEED_KEY, DEFAULT_SEED))
    if purpose != "release":
        seed = int(
            np.random.SeedSequence([seed, zlib.crc32(purpose.encode())]).generate_state(1)[0]
        )
    return Noise.seeded(seed)


def show_mode(noise: Noise) -> None:
    """One line saying which noise this page's releases use."""
    if noise.is_secure:
        st.caption(f"Noise: {noise.label}.")
    else:
        st.warning(f"Seeded noise (seed {noise.seed}): {noise.label}.")
