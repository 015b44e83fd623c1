"""Streamlit helpers shared by the pages: the noise-mode switch and error display.

Pages stay thin: they read widgets, call `core`, and render with these helpers.
"""

from __future__ import annotations

from contextlib import contextmanager

import streamlit as st

from core.errors import InputError
from core.privacy import SEEDED_LABEL, Noise

MODE_KEY = "dpx_demo_mode"
SEED_KEY = "dpx_demo_seed"


def mode_sidebar() -> None:
    """Sidebar switch between secure releases and reproducible demo mode (shared by all pages)."""
    with st.sidebar:
        st.toggle(
            "Reproducible demo mode",
            key=MODE_KEY,
            help="Seeded noise so a class sees the same numbers twice. Not for real releases.",
        )
        if st.session_state.get(MODE_KEY):
            st.number_input("Seed", min_value=0, value=42, step=1, key=SEED_KEY)
            st.warning(f"Seeded noise: {SEEDED_LABEL}.")
        else:
            st.success("Secure mode: noise from OpenDP, never seeded.")


def current_noise() -> Noise:
    """The `Noise` the sidebar asks for (a fresh seeded generator per call in demo mode)."""
    if st.session_state.get(MODE_KEY):
        return Noise.seeded(int(st.session_state.get(SEED_KEY, 42)))
    return Noise.secure()


def mode_label() -> str:
    return current_noise().label


@contextmanager
def user_errors():
    """Show an `InputError` as a clear message and stop the page; nothing further is released."""
    try:
        yield
    except InputError as exc:
        st.error(str(exc))
        st.stop()
