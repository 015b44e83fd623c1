"""Streamlit helpers shared by the pages: the noise-mode switch and error display.

Pages stay thin: they read widgets, call `core`, and render with these helpers.
"""

from __future__ import annotations

import zlib
from contextlib import contextmanager

import numpy as np
import streamlit as st

from core.errors import InputError
from core.privacy import SEEDED_LABEL, Noise


def _leave_legacy_pages_mode() -> None:
    """Make the first run of a fresh server use app.py's `st.navigation`.

    Streamlit starts in its legacy multipage mode whenever a `pages/` folder sits beside the
    main script, until the first `st.navigation` call. A first visitor who opens a page URL
    directly would then get the page without app.py's shell (no mode switch, the folder's
    files listed as pages). Leaving that mode and rerunning sends the run through app.py.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


_leave_legacy_pages_mode()  # once per process: the first importer is the first run

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


def current_noise(purpose: str = "release") -> Noise:
    """The `Noise` the sidebar asks for (a fresh seeded generator per call in demo mode).

    In demo mode, a `purpose` other than "release" (e.g. "evaluation") gets its own stream
    derived from the seed, so evaluation draws never repeat the release's noise.
    """
    if not st.session_state.get(MODE_KEY):
        return Noise.secure()
    seed = int(st.session_state.get(SEED_KEY, 42))
    if purpose != "release":
        seed = int(
            np.random.SeedSequence([seed, zlib.crc32(purpose.encode())]).generate_state(1)[0]
        )
    return Noise.seeded(seed)


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
