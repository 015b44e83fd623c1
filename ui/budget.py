"""A registered dataset's budget, in one line that is never stale.

`budget_line` draws the line into a placeholder and remembers it for this run; after every
charge a page calls `refresh_budget_lines()` (the outcome renderers in `ui.outcomes` do), so
the line shows the registry's spend as of now, not as of the start of the run.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import streamlit as st

from core.privacy.cost import Dimension
from core.registry import Dataset, Registry

SYMBOL = {Dimension.EPSILON: "ε", Dimension.DELTA: "δ"}
_LINES = threading.local()  # one script thread per session: the lines drawn in this run


@dataclass(frozen=True)
class BudgetBar:
    """One dimension of a dataset's (ε, δ) budget: spent, total and what remains."""

    dimension: Dimension
    spent: float
    total: float

    @property
    def remaining(self) -> float:
        return max(0.0, self.total - self.spent)

    @property
    def fraction(self) -> float:
        """The share spent, for a progress bar (a total of 0 is full: nothing can be spent)."""
        return min(1.0, self.spent / self.total) if self.total > 0 else 1.0

    def text(self) -> str:
        sym = SYMBOL[self.dimension]
        if self.total <= 0:
            return f"{sym}: total 0 — releases that need {sym} are refused"
        return (
            f"{sym} spent {self.spent:.4g} of {self.total:.4g} "
            f"(remaining {self.remaining:.4g})"
        )


def bars(registry: Registry, dataset: Dataset) -> tuple[BudgetBar, BudgetBar]:
    """The dataset's ε and δ, spent and remaining, read from the registry now."""
    eps_spent, delta_spent = registry.spent(dataset.name)
    p = dataset.policy
    return (
        BudgetBar(Dimension.EPSILON, eps_spent, p.epsilon_total),
        BudgetBar(Dimension.DELTA, delta_spent, p.delta_total),
    )


def budget_bars(registry: Registry, dataset: Dataset, metrics: bool = True) -> None:
    """A dataset's budget: a bar each for ε and δ (and with `metrics`, what remains of each and
    the per-query caps)."""
    eps, delta = bars(registry, dataset)
    for bar in (eps, delta):
        st.progress(bar.fraction, text=bar.text())
    if not metrics:
        return
    p = dataset.policy
    c1, c2, c3 = st.columns(3)
    c1.metric(f"ε remaining · {dataset.name}", f"{eps.remaining:.4g}")
    c2.metric(f"δ remaining · {dataset.name}", f"{delta.remaining:.3g}")
    caps = [
        f"{sym} {cap:g}"
        for sym, cap in (("ε", p.max_epsilon_per_query), ("δ", p.max_delta_per_query))
        if cap is not None
    ]
    c3.metric(f"cap per query · {dataset.name}", ", ".join(caps) or "none")


def budget_text(registry: Registry, dataset: Dataset) -> str:
    eps, delta = bars(registry, dataset)
    return (
        f"Budget of dataset **{dataset.name}**: {eps.text()}, {delta.text()} "
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
