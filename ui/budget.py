"""A registered dataset's budget, in one line that is never stale.

`budget_line` draws the line into a placeholder and remembers it for this run; after every
charge a page calls `refresh_budget_lines()` (the outcome renderers in `ui.outcomes` do), so
the line shows the registry's spend as of now, not as of the start of the run.
"""

from __future__ import annotations

import threading

import streamlit as st

from core.registry import Dataset, Registry

_LINES = threading.local()  # one script thread per session: the lines drawn in this run


def budget_text(registry: Registry, dataset: Dataset) -> str:
    eps_spent, delta_spent = registry.spent(dataset.name)
    p = dataset.policy
    eps_left = max(0.0, p.epsilon_total - eps_spent)
    return (
        f"Budget of dataset **{dataset.name}**: ε spent {eps_spent:.4g} of {p.epsilon_total:g} "
        f"(remaining {eps_left:.4g}), δ spent {delta_spent:.3g} of {p.delta_total:g} "
        "(basic composition; every tool and session charges this one budget, and only the "
        "owner changes a total, with `dpx dataset budget`)."
    )


def reset_budget_lines() -> None:
    """Start of a page run (`ui.shell.page_setup`): forget the lines of the previous run."""
    _LINES.lines = []


def budget_line(registry: Registry, dataset: Dataset) -> None:
    """Draw the dataset's budget line (redrawn by `refresh_budget_lines`)."""
    slot = st.empty()
    slot.caption(budget_text(registry, dataset))
    if not hasattr(_LINES, "lines"):
        _LINES.lines = []
    _LINES.lines.append((slot, registry, dataset))


def refresh_budget_lines() -> None:
    """Redraw every budget line of this run from the registry (call after a charge)."""
    for slot, registry, dataset in getattr(_LINES, "lines", []):
        slot.caption(budget_text(registry, dataset))
