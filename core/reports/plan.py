"""Planned vs realized: where a release falls under a saved budget plan, its report shows the
plan's item and status next to what the release spent. Rendered from registry records only
(the release, the dataset's saved plans and its recorded releases; `core.planning.budget`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from core.planning.budget import (
    BudgetItem,
    PlanSpend,
    PlanStatus,
    assign,
    items_of,
    plan_for,
    plan_status,
    plan_vs_spend,
)
from core.registry import Release, RunKind, SavedPlan
from core.reports.common import table


@dataclass(frozen=True)
class PlannedVsRealized:
    """The plan a release falls under, the item it used (None: beyond the plan), its status
    and the whole plan against spend."""

    plan: SavedPlan
    item: BudgetItem | None
    status: PlanStatus
    spend: PlanSpend


def planned_vs_realized(
    release: Release, plans: Sequence[SavedPlan], releases: Sequence[Release]
) -> PlannedVsRealized | None:
    """None when the release is not a charged release or no plan was saved before it."""
    plans = list(plans)
    if release.kind is not RunKind.RELEASE:
        return None
    plan = plan_for(release, plans)
    if plan is None:
        return None
    everyone = {r.id: r for r in [*releases, release]}.values()
    mine = [r for r in everyone if r.kind is RunKind.RELEASE and plan_for(r, plans) == plan]
    slot = assign(plan, mine).get(release.id)
    return PlannedVsRealized(
        plan,
        None if slot is None else items_of(plan)[slot],
        plan_status(release, plans, list(everyone)),
        plan_vs_spend(plan, plans, list(everyone)),
    )


def section(release: Release, p: PlannedVsRealized) -> str:
    """The report's "Plan" section."""
    plan = p.plan
    head = (
        f"<p>This release falls under budget plan <b>{escape(plan.name)}</b> (#{plan.id}, saved "
        f"{escape(plan.time)}, planned ε {plan.epsilon:g}): <b>{escape(p.status.value)}</b>.</p>"
    )
    if p.item is None:
        row = ["(no planned item with room left matches it)", None, None, release.epsilon]
    else:
        row = [p.item.name, p.item.epsilon, p.item.repeat, release.epsilon]
    rows = [[*row, p.status.value]]
    body = table(
        ["planned release", "planned ε each", "planned count", "ε this release spent", "status"],
        rows,
        "plan",
    )
    return head + body + f"<p>{escape(p.spend.describe())}</p>"
