"""Budget plans: the releases a data owner intends for a dataset, against its remaining budget.

The officer lists intended releases (`BudgetItem`: a tool, the ε and δ each costs — from a
planner or typed in — how many of them, and optionally parameters a release must match, e.g.
the location method). `split_budget` lays them against the dataset's remaining budget in the
order given: items with a fixed cost first take what they need; items marked as a share split
what is left; each item says whether it fits and how many more of it would. Saving a plan
(`Registry.save_plan`) records it and charges nothing.

Later, `plan_status` tells whether a release was "as planned" (it matches an item of the
dataset's latest plan saved before it, within that item's cost and count) or "beyond the plan",
and `plan_vs_spend` sets each item's planned cost against the releases that used it. Both are
pure functions of registry records, for the CLI, the pages and the Releases page alike.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from core.errors import InputError
from core.governance.roles import Role, require_owner
from core.privacy import Cost
from core.privacy.cost import Dimension, check_budget
from core.registry import Registry, Release, RunKind, SavedPlan, Tool

PLANNABLE_TOOLS = (Tool.LOCATION.value, Tool.SQL.value, Tool.PP.value, "pilot", "bounds")
_TOL = 1e-9
MAX_REPEAT = 100_000


@dataclass(frozen=True)
class BudgetItem:
    """One intended release (or `repeat` alike). `epsilon` None: a share of what is left
    after the fixed items (`weight` sets its part of that)."""

    tool: str
    epsilon: float | None
    delta: float = 0.0
    repeat: int = 1
    match: dict = field(default_factory=dict)  # public parameters a release must equal
    label: str = ""
    weight: float = 1.0

    def __post_init__(self):
        if self.tool not in PLANNABLE_TOOLS:
            raise InputError(
                f"unknown tool '{self.tool}' in the budget plan. Fix: one of "
                f"{', '.join(PLANNABLE_TOOLS)}."
            )
        if self.epsilon is not None and not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise InputError(f"a planned release's epsilon must be > 0, got {self.epsilon}.")
        if not (math.isfinite(self.delta) and 0 <= self.delta < 1):
            raise InputError(f"a planned release's delta must be in [0, 1), got {self.delta}.")
        if isinstance(self.repeat, bool) or not 1 <= int(self.repeat) <= MAX_REPEAT:
            raise InputError(f"repeat must be 1 to {MAX_REPEAT:,}, got {self.repeat}.")
        if not (math.isfinite(self.weight) and self.weight > 0):
            raise InputError(f"a share's weight must be > 0, got {self.weight}.")

    @property
    def name(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in sorted(self.match.items()))
        base = self.label or (f"{self.tool} ({extra})" if extra else self.tool)
        return base if self.repeat == 1 else f"{base} x{self.repeat}"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> BudgetItem:
        return cls(
            tool=str(data["tool"]),
            epsilon=None if data.get("epsilon") is None else float(data["epsilon"]),
            delta=float(data.get("delta") or 0.0),
            repeat=int(data.get("repeat") or 1),
            match=dict(data.get("match") or {}),
            label=str(data.get("label") or ""),
            weight=float(data.get("weight") or 1.0),
        )

    def matches(self, release: Release) -> bool:
        """Same tool, every `match` parameter equal, and a cost within the item's."""
        if release.tool != self.tool:
            return False
        for key, value in self.match.items():
            if str(release.params.get(key)) != str(value):
                return False
        if self.epsilon is None:
            return True
        return release.epsilon <= self.epsilon * (1 + _TOL) + _TOL and (
            release.delta <= self.delta * (1 + _TOL) + 1e-15
        )


_ITEM = re.compile(
    r"^(?P<tool>[a-z]+):(?P<eps>share(?:\*[0-9.]+)?|[0-9.eE+-]+)(?:/(?P<delta>[0-9.eE+-]+))?"
    r"(?:x(?P<repeat>[0-9]+))?(?::(?P<match>.*))?$"
)


def parse_item(text: str) -> BudgetItem:
    """`TOOL:EPSILON[/DELTA][xREPEAT][:key=value,...]` or `TOOL:share[*WEIGHT]...`, e.g.
    `location:0.5x4:method=auto`, `sql:1.2/1e-5`, `pp:share*2`."""
    fix = (
        "Fix: write TOOL:EPSILON[/DELTA][xREPEAT][:key=value,...], e.g. "
        "location:0.5x4:method=auto or sql:share."
    )
    m = _ITEM.match(str(text).strip())
    if m is None:
        raise InputError(f"cannot read the planned release '{text}'. {fix}")
    eps_text = m["eps"]
    weight = 1.0
    try:
        if eps_text.startswith("share"):
            epsilon = None
            weight = float(eps_text.partition("*")[2] or 1.0)
        else:
            epsilon = float(eps_text)
        delta = float(m["delta"] or 0.0)
    except ValueError:
        raise InputError(f"cannot read a number in '{text}'. {fix}") from None
    match = {}
    for pair in (m["match"] or "").split(","):
        if not pair.strip():
            continue
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"'{pair}' in '{text}' is not key=value. {fix}")
        match[key.strip()] = value.strip()
    if m["tool"] == Tool.LOCATION.value and "method" in match:
        match["method"] = _location_method(match["method"], text)
    return BudgetItem(m["tool"], epsilon, delta, int(m["repeat"] or 1), match, weight=weight)


def _location_method(name: str, text: str) -> str:
    """A planned location release's `method=`: one of the method registry's names (a release
    records the name it was asked for, lower case), or refused with the list."""
    from core.spatial.methods import METHODS, VARIANTS  # the one table of location methods

    method = name.strip().lower()
    known = [*METHODS, *VARIANTS]
    if method not in known:
        raise InputError(
            f"unknown location method '{name}' in the planned release '{text}'. Fix: method= "
            f"one of {', '.join(known)}."
        )
    return method


@dataclass(frozen=True)
class Allocation:
    """An item laid against the budget: its cost each, in all, whether it fits, and how many
    more of it the budget left after the whole plan would allow."""

    item: BudgetItem
    epsilon_each: float
    delta_each: float
    fits: bool
    more_possible: int | None  # None: the item has no ε of its own
    short: tuple[Dimension, ...] = ()  # what it does not fit: ε, δ or both (empty: it fits)

    @property
    def epsilon_total(self) -> float:
        return self.epsilon_each * self.item.repeat

    def to_json(self) -> dict:
        return {
            "item": self.item.to_json(),
            "name": self.item.name,
            "epsilon_each": self.epsilon_each,
            "delta_each": self.delta_each,
            "epsilon_total": self.epsilon_total,
            "fits": self.fits,
            "short": [d.value for d in self.short],
            "more_possible": self.more_possible,
        }


@dataclass(frozen=True)
class BudgetSplit:
    """The plan against the dataset's remaining (ε, δ)."""

    dataset: str
    remaining: Cost
    allocations: tuple[Allocation, ...]

    @property
    def planned(self) -> Cost:
        eps = sum(a.epsilon_total for a in self.allocations if a.fits)
        delta = sum(a.delta_each * a.item.repeat for a in self.allocations if a.fits)
        return Cost(eps, min(delta, 1 - 1e-300))

    @property
    def left(self) -> Cost:
        p = self.planned
        return Cost(
            max(0.0, self.remaining.epsilon - p.epsilon), max(0.0, self.remaining.delta - p.delta)
        )

    def describe(self) -> str:
        fit = [a for a in self.allocations if a.fits]
        miss = [a for a in self.allocations if not a.fits]
        r, p, left = self.remaining, self.planned, self.left
        text = (
            f"Of dataset '{self.dataset}''s remaining epsilon {r.epsilon:g}, delta {r.delta:g}, "
            f"the plan uses epsilon {p.epsilon:g}, delta {p.delta:g} for {len(fit)} of "
            f"{len(self.allocations)} planned release kinds, leaving epsilon {left.epsilon:g}, "
            f"delta {left.delta:g}"
        )
        if miss:
            text += "; " + ", ".join(_miss_words(a) for a in miss) + " do not fit"
        return text + "."

    def to_json(self) -> dict:
        return {
            "dataset": self.dataset,
            "remaining": {"epsilon": self.remaining.epsilon, "delta": self.remaining.delta},
            "planned": {"epsilon": self.planned.epsilon, "delta": self.planned.delta},
            "left": {"epsilon": self.left.epsilon, "delta": self.left.delta},
            "items": [a.to_json() for a in self.allocations],
            "describe": self.describe(),
        }


def _miss_words(a: Allocation) -> str:
    short = " and ".join(d.value for d in a.short)
    return f"{a.item.name} ({short} short)" if short else a.item.name


def split_budget(dataset: str, remaining: Cost, items: Sequence[BudgetItem]) -> BudgetSplit:
    """Lay `items` against `remaining` in order: fixed-cost items take what they need while
    it lasts (an item that does not fit is marked and takes nothing); share items split what
    is then left by weight (each of an item's `repeat` releases gets an equal part)."""
    if not items:
        raise InputError("a budget plan needs at least one planned release (--item ...).")
    eps_left, delta_left = remaining.epsilon, remaining.delta
    fixed: dict[int, Allocation] = {}
    for i, item in enumerate(items):
        if item.epsilon is None:
            continue
        need_e, need_d = item.epsilon * item.repeat, item.delta * item.repeat
        short = check_budget(
            Cost(need_e, min(need_d, 1 - 1e-300)),
            total=Cost(max(0.0, eps_left), max(0.0, delta_left)),
        )
        fits = short is None
        if fits:
            eps_left, delta_left = eps_left - need_e, delta_left - need_d
        dims = () if short is None else short.dimensions
        fixed[i] = Allocation(item, item.epsilon, item.delta, fits, None, dims)
    shares = [i for i, item in enumerate(items) if item.epsilon is None]
    weight = sum(items[i].weight * items[i].repeat for i in shares)
    out = []
    for i, item in enumerate(items):
        if i in fixed:
            a = fixed[i]
            more = _more(eps_left, delta_left, a) if not shares else 0
            out.append(Allocation(item, a.epsilon_each, a.delta_each, a.fits, more, a.short))
        else:
            each = eps_left * item.weight / weight if weight else 0.0
            out.append(Allocation(item, each, 0.0, each > 0, None))
    return BudgetSplit(dataset, remaining, tuple(out))


def save_split(registry: Registry, role: Role, split: BudgetSplit, name: str) -> SavedPlan:
    """Save the items of `split` that fit as a budget plan (the data owner only; charges and
    reserves nothing); the items that do not fit are named in the plan's note."""
    require_owner(role, "saving a budget plan")
    if not str(name or "").strip():
        raise InputError("name the plan (e.g. 2025-Q3) to save it: --name NAME on the CLI.")
    items = [a.item for a in split.allocations if a.fits]
    if not items:
        raise InputError("no planned release fits the remaining budget; nothing was saved.")
    planned = split.planned
    return registry.save_plan(
        split.dataset, str(name).strip(), [i.to_json() for i in items], planned.epsilon,
        planned.delta, note="; ".join(a.item.name for a in split.allocations if not a.fits),
    )  # fmt: skip


def _more(eps_left: float, delta_left: float, a: Allocation) -> int:
    n = math.floor(eps_left / a.epsilon_each + _TOL)
    if a.delta_each > 0:
        n = min(n, math.floor(delta_left / a.delta_each + _TOL))
    return max(0, n)


# -- releases against saved plans -----------------------------------------------------------
class PlanStatus(StrEnum):
    AS_PLANNED = "as planned"
    BEYOND_PLAN = "beyond the plan"
    NO_PLAN = "no plan"
    NOT_CHARGED = "not charged"  # demo and unregistered runs, refusals: outside any plan


def items_of(plan: SavedPlan) -> tuple[BudgetItem, ...]:
    return tuple(BudgetItem.from_json(i) for i in plan.items)


def plan_for(release: Release, plans: Iterable[SavedPlan]) -> SavedPlan | None:
    """The dataset's latest plan saved before the release was recorded."""
    mine = [p for p in plans if p.dataset == release.dataset and p.after_release < release.id]
    return max(mine, key=lambda p: p.id) if mine else None


def assign(plan: SavedPlan, releases: Iterable[Release]) -> dict[int, int | None]:
    """Charged releases of the plan's dataset recorded after it was saved, in order, each given to
    the first item it matches that still has room (release id -> item index, or None)."""
    items = items_of(plan)
    used = [0] * len(items)
    out: dict[int, int | None] = {}
    for r in sorted(releases, key=lambda r: r.id):
        if r.dataset != plan.dataset or r.kind is not RunKind.RELEASE or r.id <= plan.after_release:
            continue
        slot = next(
            (k for k, it in enumerate(items) if used[k] < it.repeat and it.matches(r)), None
        )
        if slot is not None:
            used[slot] += 1
        out[r.id] = slot
    return out


def plan_status(
    release: Release, plans: Iterable[SavedPlan], releases: Iterable[Release]
) -> PlanStatus:
    """Whether `release` was "as planned" or "beyond the plan" (see the module docstring).
    `releases` are the dataset's recorded releases (to count an item's uses in order)."""
    if release.kind is not RunKind.RELEASE:
        return PlanStatus.NOT_CHARGED
    plan, slot = plan_slot(release, plans, releases)
    if plan is None:
        return PlanStatus.NO_PLAN
    return PlanStatus.AS_PLANNED if slot is not None else PlanStatus.BEYOND_PLAN


def plan_slot(
    release: Release, plans: Iterable[SavedPlan], releases: Iterable[Release]
) -> tuple[SavedPlan | None, int | None]:
    """The plan `release` falls under and the index of the item it used (None: beyond it)."""
    plans = list(plans)
    plan = plan_for(release, plans)
    if plan is None:
        return None, None
    mine = {r.id: r for r in [*releases, release] if not _superseded(r, plan, plans)}
    return plan, assign(plan, mine.values()).get(release.id)


def _superseded(r: Release, plan: SavedPlan, plans: list[SavedPlan]) -> bool:
    """A release charged under a later plan does not use this plan's items."""
    return plan_for(r, plans) is not plan if r.kind is RunKind.RELEASE else True


@dataclass(frozen=True)
class ItemSpend:
    """One planned item against the releases that used it."""

    item: BudgetItem
    used: int
    epsilon_spent: float


@dataclass(frozen=True)
class PlanSpend:
    """A saved plan against the dataset's charged releases since it was saved."""

    plan: SavedPlan
    items: tuple[ItemSpend, ...]
    beyond: tuple[int, ...]  # ids of releases beyond the plan
    beyond_epsilon: float

    def describe(self) -> str:
        used = sum(i.epsilon_spent for i in self.items)
        return (
            f"Plan '{self.plan.name}' (#{self.plan.id}) planned epsilon {self.plan.epsilon:g}; "
            f"releases as planned spent {used:g}, releases beyond the plan "
            f"{self.beyond_epsilon:g} ({len(self.beyond)} release(s))."
        )

    def to_json(self) -> dict:
        return {
            "plan_id": self.plan.id,
            "name": self.plan.name,
            "dataset": self.plan.dataset,
            "time": self.plan.time,
            "planned_epsilon": self.plan.epsilon,
            "items": [
                {
                    "name": s.item.name,
                    "planned_epsilon_each": s.item.epsilon,
                    "planned_count": s.item.repeat,
                    "used": s.used,
                    "epsilon_spent": s.epsilon_spent,
                }
                for s in self.items
            ],
            "beyond_the_plan": list(self.beyond),
            "beyond_epsilon": self.beyond_epsilon,
            "describe": self.describe(),
        }


def plan_vs_spend(plan: SavedPlan, plans: Iterable[SavedPlan], releases: Iterable[Release]):
    """`plan`'s items against the charged releases made under it (until a later plan)."""
    plans = list(plans)
    mine = [r for r in releases if not _superseded(r, plan, plans)]
    slots = assign(plan, mine)
    items = items_of(plan)
    by_id = {r.id: r for r in mine}
    spend = [
        ItemSpend(
            it,
            sum(1 for s in slots.values() if s == k),
            sum(by_id[rid].epsilon for rid, s in slots.items() if s == k),
        )
        for k, it in enumerate(items)
    ]
    beyond = tuple(rid for rid, s in slots.items() if s is None)
    return PlanSpend(plan, tuple(spend), beyond, sum(by_id[i].epsilon for i in beyond))
