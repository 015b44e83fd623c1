"""Waiting for the app in browser tests: one helper instead of a copy per test module."""

from __future__ import annotations

from playwright.sync_api import TimeoutError as PlaywrightTimeout

FINISH_MS = 300_000  # a rerun on two loaded cores (a build, a query) may take minutes


def wait_idle(page, start_ms: int = 300) -> None:
    """Wait until Streamlit has finished the rerun an action started (its status widget says
    'Running...' meanwhile). `start_ms`: how long a rerun may take to start; when the widget
    shows up within it, wait for it to go (a loaded server starts late; a quick rerun may have
    come and gone already)."""
    status = page.get_by_test_id("stStatusWidget")
    try:
        status.wait_for(state="attached", timeout=start_ms)
    except PlaywrightTimeout:
        return
    status.wait_for(state="detached", timeout=FINISH_MS)
