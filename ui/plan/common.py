"""What every Plan step shares: the step's box (kept open across reruns and reloads) and the
plan's one-sentence basis."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from core.errors import InputError
from ui.state import persist

PLAN_NOTE = (
    "A plan reads no raw value and charges nothing (except a pilot, which is its own release "
    "and says so): it works the same for the data owner and in analyst mode."
)


@contextmanager
def plan_box(title: str, key: str) -> Iterator[bool]:
    """The Plan step's expander (its open state is kept); yields whether it is open — the step
    draws its widgets only when it is. A bad input (`InputError`) is shown in the box in one
    line and the rest of the page goes on: a plan never blocks the release step below it."""
    with st.expander(f"Plan · {title}", key=persist(key, False), on_change="rerun") as box:
        if box.open:
            st.caption(PLAN_NOTE)
        try:
            yield box.open
        except InputError as exc:
            st.error(str(exc))


def show_basis(text: str) -> None:
    """The plan's basis, in the sentence a stakeholder reads."""
    st.caption(f"**What this plan rests on:** {text}")
