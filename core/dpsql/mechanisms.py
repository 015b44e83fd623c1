"""The noisy mechanisms of a DP SQL query as typed objects (spec §2.7, §2.10).

A `Mechanism` is the single source of truth for one noisy statistic: its sensitivity and ε share
set the noise scale that `release` draws with, and `charges` derives the ledger entries from the
very same objects, never from display rows. Aggregate kinds (`core.dpsql.ir.AggKind`), the
statistics of an aggregate (`Component`) and the noise families (`MechanismKind`) are enums.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import TYPE_CHECKING

from core.privacy import Spend, make_spend

if TYPE_CHECKING:  # pragma: no cover
    from core.dpsql.rewrite import StagedPlan

PROTECTS = "privacy unit"


class Component(StrEnum):
    """Which statistic of an aggregate a mechanism noises."""

    UNITS = "units"
    COUNT = "count"
    SUM = "sum"
    SUMSQ = "sumsq"
    QUANTILE = "quantile"


class MechanismKind(StrEnum):
    DISCRETE_LAPLACE = "discrete Laplace"
    EXPONENTIAL = "exponential mechanism"


@dataclass(frozen=True)
class Mechanism:
    """One noisy statistic: column of cross_user, integer sensitivity, epsilon and scale.

    Privacy claim: a unit changes at most C_u = `max_groups` partitions, each by at most
    `sensitivity` (in integer units, values × 2^exponent); discrete Laplace of scale
    b = C_u·Δ/ε (or the exponential mechanism with the same budget) makes the statistic
    `epsilon`-DP over all partitions at unit level.
    """

    aggregate: int | None  # index into query.aggregates; None for the threshold count
    component: Component
    column: str
    sensitivity: int  # per partition, in integer units (values x 2^exponent)
    exponent: int
    epsilon: Fraction
    max_groups: int

    def __post_init__(self):
        object.__setattr__(self, "component", Component(self.component))
        if not self.epsilon > 0:
            raise ValueError(f"a mechanism needs epsilon > 0, got {self.epsilon}")
        if self.sensitivity < 0 or self.max_groups < 1:
            raise ValueError("sensitivity must be >= 0 and max_groups >= 1")

    @property
    def scale(self) -> float:
        """Laplace scale b = C_u * Delta / eps in integer units (spec §2.7)."""
        return self.max_groups * self.sensitivity / float(self.epsilon)

    @property
    def kind(self) -> MechanismKind:
        if self.component == Component.QUANTILE:
            return MechanismKind.EXPONENTIAL
        return MechanismKind.DISCRETE_LAPLACE


@dataclass(frozen=True)
class Charge:
    """One ledger entry, derived from the mechanism that draws the noise."""

    label: str
    epsilon: float
    delta: float
    mechanism: Mechanism

    def spend(self) -> Spend:
        return make_spend(self.label, PROTECTS, self.epsilon, self.delta)


def _name_of(plan: StagedPlan, index: int | None) -> str:
    for o in plan.query.outputs:
        if o.aggregate_index == index:
            return o.name
    return f"v{index}"


def charges(plan: StagedPlan) -> list[Charge]:
    """Every ε and δ the plan spends: each mechanism's own ε; δ on partition selection (which
    reuses a COUNT(DISTINCT uid) mechanism at no extra ε, or has its own unit count)."""
    q = plan.query
    out = []
    for m in plan.mechanisms:
        agg = q.aggregates[m.aggregate]
        label = (
            f"{_name_of(plan, m.aggregate)}: {agg.kind} {m.component} ({m.kind}, "
            f"scale {m.scale / 2.0**m.exponent:.4g})"
        )
        out.append(Charge(label, float(m.epsilon), 0.0, m))
    tm = plan.threshold_mechanism
    if tm is not None:
        if tm.aggregate is None:
            label = f"partition selection: unit count >= T (discrete Laplace + threshold, scale {tm.scale:.4g})"
            out.append(Charge(label, float(tm.epsilon), q.options.delta, tm))
        else:
            label = "partition selection: threshold on the reused unit count"
            out.append(Charge(label, 0.0, q.options.delta, tm))
    total = sum(c.epsilon for c in out)
    if abs(total - q.options.epsilon) > 1e-9 * max(1.0, q.options.epsilon):
        raise AssertionError(
            f"charges add up to {total}, the query's epsilon is {q.options.epsilon}"
        )
    return out
