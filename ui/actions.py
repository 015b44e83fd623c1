"""Every heavy page action runs in one bounded pool (issue 29): a location build, a PP
publication, a planner's simulation, a pilot, a report.

The app server is one process for every browser session; sixteen people pressing Build at once
would otherwise run sixteen builds side by side, each with its own copy of the counts, until the
server runs out of memory after their charges. `ACTIONS` admits `DPX_ACTION_SLOTS` actions at a
time (default: the CPUs, 1 to 4); the others wait in arrival order and their page says how
many are ahead. DP SQL queries have their own pool, which also divides DuckDB's memory
(`core.dpsql.execute.pool.POOL`). Waiting changes when an action runs, never what it computes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from core.pool import SlotPool, slots_from_env

ACTIONS = SlotPool(slots_from_env("DPX_ACTION_SLOTS"))


@contextmanager
def queued(doing: str | None) -> Iterator[None]:
    """Run the block in one of `ACTIONS`' slots, under a spinner saying `doing` (None: the block
    shows its own progress); while queued, the page shows how many actions are ahead (the line
    goes once the action starts)."""
    line = st.empty()

    def waiting(ahead: int) -> None:
        line.info(f"Queued: {ahead} action{'' if ahead == 1 else 's'} ahead of this one…")

    with ACTIONS.slot(waiting):
        line.empty()
        if doing is None:
            yield
        else:
            with st.spinner(doing):
                yield
