"""Play in the teaching steppers (HTF's depths, PP's iterations): one step every `seconds`, kept
by the clock, labelled from the same number, and the pace measured shown beside it.

A Play step draws step k, waits, and reruns with k + 1. Sleeping a fixed time after drawing
made a step last the drawing time plus the sleep (2.1–2.3 s a depth against a stated 1.2 s,
issue 32). Here each step is due `seconds` after the previous one was (`next_due`): the wait is
what is left of the pace once this run has drawn, none when drawing alone took longer — then
the page says the pace it measured (`pace_note`) instead of promising one it cannot keep.
"""

from __future__ import annotations

import time

import streamlit as st

_clock = time.monotonic  # module attributes, so a test can run Play on a fake clock
_sleep = time.sleep
MEASURED = 6  # the last this many step starts give the measured pace


def play_label(seconds: float, step: str) -> str:
    """The Play toggle's label, stating the pace `wait_for_next` keeps."""
    return f"▶ Play (one {step} every {seconds:g} s; stops at the last {step})"


def next_due(previous_due: float | None, started: float, now: float, seconds: float) -> float:
    """When the next step should start: `seconds` after this step's own start (the previous
    due time, or this run's start for Play's first step), and never before `now`."""
    base = started if previous_due is None else previous_due
    return max(now, base + seconds)


def clock() -> float:
    """Now on the Play clock: a stepper reads it when its run starts (`wait_for_next`'s
    `started`)."""
    return _clock()


def wait_for_next(key: str, seconds: float, started: float) -> None:
    """Sleep until the next step is due (see `next_due`) and remember when that is."""
    now = _clock()
    due = next_due(st.session_state.get(key), started, now, seconds)
    _sleep(due - now)
    st.session_state[key] = due
    starts = [*st.session_state.get(f"{key}_starts", []), due][-MEASURED:]
    st.session_state[f"{key}_starts"] = starts


def stop_playing(key: str) -> None:
    """Play is off: the next Play starts from its own first step, measured afresh."""
    st.session_state.pop(key, None)
    st.session_state.pop(f"{key}_starts", None)


def measured_pace(key: str) -> float | None:
    """Seconds per step over the last steps played (None before two steps)."""
    starts = st.session_state.get(f"{key}_starts", [])
    if len(starts) < 2:
        return None
    return (starts[-1] - starts[0]) / (len(starts) - 1)


def pace_note(key: str, seconds: float, step: str) -> None:
    """While playing: the pace measured, said plainly when it is slower than the label's."""
    pace = measured_pace(key)
    if pace is None:
        return
    if pace > seconds * 1.1:
        st.caption(
            f"Measured: one {step} every {pace:.1f} s — drawing a {step} takes longer than "
            f"{seconds:g} s on this machine now, so Play goes at that speed."
        )
    else:
        st.caption(f"Measured: one {step} every {pace:.1f} s.")
