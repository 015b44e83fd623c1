"""Waiting for the app in browser tests: one helper instead of a copy per test module."""

from __future__ import annotations

FINISH_MS = 300_000  # a rerun on two loaded cores (a build, a query) may take minutes


def wait_idle(page, start_ms: int = 300) -> None:
    """Wait until Streamlit has finished the rerun an action started (its status widget says
    'Running...' meanwhile): give the rerun `start_ms` to start (longer where a loaded server
    may start late), then wait for the widget to go."""
    page.wait_for_timeout(start_ms)
    page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=FINISH_MS)
