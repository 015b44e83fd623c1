"""Streamlit helpers shared by the pages: the noise-mode switch, error display, and keeping a
page's work for the session (`persist`, `forget`, `kept_upload`).

Pages stay thin: they read widgets, call `core`, and render with these helpers. Rule for every
page: never call a Streamlit element inside a `st.cache_data`/`st.cache_resource` function
(cached values are shared between sessions and replayed); keep results in `st.session_state`.
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


# -- keeping a page's work when the user navigates away and back -------------------------------
#
# Streamlit deletes the state of every widget that is not drawn in a run, so visiting Home and
# coming back resets a page's widgets. `persist` keeps a shadow copy of a widget's value under a
# non-widget key (which Streamlit never deletes) and puts it back before the widget is drawn.
#
#     eps = st.select_slider("epsilon", options, key=persist("lh_eps", 0.5))
#
# Pass the default to `persist`, not to the widget (`value=`/`index=`/`default=`): the widget then
# reads its value from session_state only, and Streamlit never warns about two defaults.
# Results (non-widget objects) can simply be stored in `st.session_state` under your own key.

_SHADOW = "_persist::"


def persist(key: str, default=None) -> str:
    """Return `key` after making sure the widget `key` gets its last value (or `default`) back.

    Call it as the widget's `key=` argument, on every run of the page. Nothing is released: this
    only keeps the session's own inputs.
    """
    shadow = _SHADOW + key
    if key in st.session_state:
        st.session_state[shadow] = st.session_state[key]
    elif shadow in st.session_state:
        st.session_state[key] = st.session_state[shadow]
    elif default is not None:
        st.session_state[key] = default
    return key


def forget(*keys: str) -> None:
    """Drop persisted widget values (e.g. when a new upload makes old choices meaningless)."""
    for key in keys:
        st.session_state.pop(key, None)
        st.session_state.pop(_SHADOW + key, None)


def kept_upload(label: str, key: str, **uploader_kwargs) -> tuple[str, bytes] | None:
    """A file uploader whose file survives navigation: returns (name, bytes) or None.

    `st.file_uploader` cannot be given a value back, so after the user navigates away and back
    the page keeps using the file uploaded earlier (stored under `key + "::file"`) and says so;
    a "Forget" button drops it. A new upload replaces it.
    """
    stored_key = key + "::file"
    up = st.file_uploader(label, key=key, **uploader_kwargs)
    if up is not None:
        st.session_state[stored_key] = (up.name, up.getvalue())
        return st.session_state[stored_key]
    stored = st.session_state.get(stored_key)
    if stored is None:
        return None
    c1, c2 = st.columns([4, 1])
    c1.caption(f"Using the file uploaded earlier in this session: **{stored[0]}**.")
    if c2.button("Forget this file", key=key + "::forget"):
        st.session_state.pop(stored_key, None)
        st.rerun()
    return stored
