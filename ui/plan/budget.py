"""The Releases page's budget plan: intended releases laid against a registered dataset's
remaining budget, saved to the registry (charging nothing), and saved plans against spend.

The same calls as `dpx plan budget draft|save|show` (`core.planning.budget`): `split_budget`
for the draft, `Registry.save_plan` for the save — by the data owner only, as the CLI
(`require_owner`) — and `plan_vs_spend` / `plan_status` for what was spent since. Everything
here reads registry records only (no data).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.errors import InputError
from core.governance import Role
from core.planning.budget import (
    BudgetSplit,
    parse_item,
    plan_status,
    plan_vs_spend,
    save_split,
    split_budget,
)
from core.privacy import Cost
from core.registry import Dataset, Registry, Release
from ui.glossary import in_app
from ui.shell import is_analyst
from ui.state import persist

ITEMS_HELP = (
    "One planned release per line: TOOL:EPSILON[/DELTA][xREPEAT][:key=value,...] or "
    "TOOL:share[*WEIGHT] (a share of what the fixed items leave). Tools: location, sql, pp, "
    "pilot, bounds. E.g. `location:0.2x4:method=auto`, `sql:1/1e-6`, `pp:share`. Each tool "
    "page's Plan step gives the line for its plan."
)


def parse_items(text: str):
    """The typed lines as `BudgetItem`s (one-line `InputError` naming a bad line)."""
    return [parse_item(line) for line in (text or "").splitlines() if line.strip()]


def draft(registry: Registry, name: str, text: str) -> BudgetSplit | None:
    items = parse_items(text)
    if not items:
        return None
    return split_budget(name, Cost(*registry.remaining(name)), items)


def split_frame(split: BudgetSplit) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "planned release": a.item.name,
                "ε each": a.epsilon_each,
                "δ each": a.delta_each,
                "count": a.item.repeat,
                "ε in all": a.epsilon_total,
                "fits": "yes" if a.fits else "NO",
                "more would fit": a.more_possible,
            }
            for a in split.allocations
        ]
    )


def save(registry: Registry, split: BudgetSplit, plan_name: str):
    """Save the items that fit, as `dpx plan budget save` does (owner only; charges nothing)."""
    return save_split(registry, Role.ANALYST if is_analyst() else Role.OWNER, split, plan_name)


def budget_plan(registry: Registry, d: Dataset) -> None:
    """The dataset's budget plan box: draft, save (owner), saved plans against spend."""
    key = f"rel_plan_{d.name}"
    with st.expander(
        f"Budget plan · {d.name}", key=persist(f"{key}_open", False), on_change="rerun"
    ):
        text = st.text_area(
            "Intended releases", persist_state="session", key=persist(f"{key}_items", ""),
            help=ITEMS_HELP, placeholder="location:0.2x4:method=auto\nsql:1/1e-6\npp:share",
        )  # fmt: skip
        st.caption(ITEMS_HELP)
        try:
            split = draft(registry, d.name, text)
        except InputError as err:
            st.error(str(err))
            split = None
        if split is not None:
            st.markdown(in_app(split.describe()))
            st.dataframe(split_frame(split), hide_index=True, key=f"{key}_split")
            _save_controls(registry, split, key)
        _saved_plans(registry, d)


def _save_controls(registry: Registry, split: BudgetSplit, key: str) -> None:
    if is_analyst():
        st.caption("Only the data owner saves a budget plan (`dpx plan budget save`).")
        return
    c1, c2 = st.columns([2, 1])
    plan_name = c1.text_input("Plan name", key=persist(f"{key}_name", ""))
    if c2.button("Save the plan (charges nothing)", key=f"{key}_save"):
        try:
            saved = save(registry, split, plan_name)
        except InputError as err:
            st.error(str(err))
        else:
            st.success(f"Saved as plan #{saved.id} '{saved.name}' — nothing was charged.")


def _saved_plans(registry: Registry, d: Dataset) -> None:
    plans = registry.plans(d.name)
    if not plans:
        st.caption("No saved plan for this dataset yet.")
        return
    releases = registry.releases(d.name)
    for p in reversed(plans):
        spend = plan_vs_spend(p, plans, releases)
        st.markdown(f"**{in_app(spend.describe())}**")
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "planned release": s.item.name,
                        "planned ε each": s.item.epsilon,
                        "planned count": s.item.repeat,
                        "used": s.used,
                        "ε spent": s.epsilon_spent,
                    }
                    for s in spend.items
                ]
            ),
            hide_index=True,
            key=f"rel_plan_{d.name}_{p.id}",
        )


def statuses(registry: Registry, runs: Sequence[Release]) -> dict[int, str]:
    """Each listed run's plan status ("as planned", "beyond the plan", "no plan", ...)."""
    by_dataset: dict[str, tuple] = {}
    out = {}
    for r in runs:
        if r.dataset is None:
            out[r.id] = "—"
            continue
        if r.dataset not in by_dataset:
            by_dataset[r.dataset] = (registry.plans(r.dataset), registry.releases(r.dataset))
        plans, releases = by_dataset[r.dataset]
        out[r.id] = plan_status(r, plans, releases).value
    return out
