"""What the app cleans once per server process, at start (`app.py`): private work directories
that killed runs left (`core.files.remove_stale_work_directories`: `dpx-pp-`, `dpx-spill-`,
`dpx-spark-` of dead processes, in the temp directory and every recorded `--spill-dir`) and
uploads past their lifetime (`ui.upload_store`)."""

from __future__ import annotations

import contextlib

import streamlit as st

from core.files import remove_stale_work_directories
from ui import upload_store


@st.cache_resource(show_spinner=False)
def clean_at_start() -> int:
    """Once per server process (a cached resource); never raises. Returns how many directories
    and files were removed."""
    removed = len(remove_stale_work_directories())
    with contextlib.suppress(OSError):  # an unwritable store: the next upload says so
        removed += len(upload_store.remove_expired())
    return removed
