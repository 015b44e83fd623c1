"""Where one recorded release stands against its dataset's budget plan, in one sentence.

Every tool says it the same way right after a release — `dpx sql|release|htf|balance` (in the
registry line and as `plan` in `--json`) and the three pages — so a person sees at once whether
what they just spent was planned. It is computed from registry records only (the release, the
dataset's saved plans and its other releases): no data is read, nothing is charged, and an
analyst may see it (plans and charges are public parameters of the dataset).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.planning.budget import PlanStatus, items_of, plan_slot
from core.registry import Registry, Release, RunKind


@dataclass(frozen=True)
class Standing:
    """A release's plan status, the plan it falls under (None: no plan) and the item it used
    (None: beyond the plan, or no plan)."""

    status: PlanStatus
    plan_id: int | None = None
    plan_name: str = ""  # a saved plan always has one
    item: str | None = None

    @property
    def sentence(self) -> str:
        """One sentence for the pages and the CLI's registry line ('' when not a release)."""
        if self.status is PlanStatus.NOT_CHARGED:
            return ""
        if self.status is PlanStatus.NO_PLAN:
            return "No budget plan saved for this dataset."
        plan = f"budget plan #{self.plan_id} ({self.plan_name})"
        if self.status is PlanStatus.AS_PLANNED:
            return f"As planned: item '{self.item}' of {plan}."
        return (
            f"Beyond the plan: no item of {plan} has room for this release (another tool, other "
            "parameters, a larger cost, or its repeats used up)."
        )

    def to_json(self) -> dict:
        return {"status": self.status.value, "plan_id": self.plan_id, "item": self.item}


def standing(registry: Registry, release: Release) -> Standing:
    """Where `release` stands against its dataset's latest plan saved before it."""
    if release.kind is not RunKind.RELEASE or release.dataset is None:
        return Standing(PlanStatus.NOT_CHARGED)
    plans = registry.plans(release.dataset)
    plan, slot = plan_slot(release, plans, registry.releases(release.dataset))
    if plan is None:
        return Standing(PlanStatus.NO_PLAN)
    if slot is None:
        return Standing(PlanStatus.BEYOND_PLAN, plan.id, plan.name)
    return Standing(PlanStatus.AS_PLANNED, plan.id, plan.name, items_of(plan)[slot].name)
