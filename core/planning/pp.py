"""Plan a PP release: feasibility and the expected error of the reconstructed SA distribution,
and, from a target error, the strictest ρ2 (for a ρ1) that still meets it.

What it rests on: the SA's public domain (the declared categories), a table size (public
under PP's claim: neighbouring tables differ in one record's SA value, and every PP release
publishes its rows), and a shape of the SA — uniform over the categories unless the owner
declares public expected shares. On counts of that shape the planner runs PP's real plan
(`core.balancing.plan.plan_partition`, the sub-tables and their `PPRandomization` objects via
`core.balancing.release`), so feasibility is the plan's own verdict and the error is read off
the mechanisms: each sub-table's retention p and domain size m give the variance of the
unbiased reconstruction (`core.balancing.estimate.true_variance`, q = (1 - p)/m), summed over
the sub-tables holding a value; the plan's ε adds the noise of its discrete Laplace counts
(`ReleaseSettings.plan_mechanism.half_width`), combined with the randomization's error as
independent errors (root of the summed squares: a normal approximation, stated). The error is
that of the SA-alone publication; nothing is read beyond the row count and nothing is charged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

from core.balancing.estimate import true_variance
from core.balancing.plan import plan_partition
from core.balancing.release import ReleaseSettings, publishable_subtables, subtable_mechanisms
from core.errors import InputError
from core.privacy import Cost

RHO_STEPS = 1000  # ρ2 is searched on the grid k / 1000
RHO1_FRONTIER = (Fraction(1, 10), Fraction(1, 5), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2))


@dataclass(frozen=True)
class PPShape:
    """The public basis: categories, expected shares (summing to 1) and the table size."""

    categories: tuple[str, ...]
    shares: tuple[float, ...]
    rows: int
    declared_shares: bool = False

    def __post_init__(self):
        if len(self.categories) < 2 or len(set(self.categories)) != len(self.categories):
            raise InputError(
                "the SA's public domain needs at least two distinct categories. "
                "Fix: --categories A,B,C (the values the SA can take)."
            )
        if len(self.shares) != len(self.categories) or any(s < 0 for s in self.shares):
            raise InputError("give one expected share >= 0 per category (--shares A=0.5,B=0.5).")
        if not math.isclose(sum(self.shares), 1.0, rel_tol=1e-6):
            raise InputError(f"the expected shares must add up to 1, got {sum(self.shares):g}.")
        if not 2 <= int(self.rows) <= 10**10:
            raise InputError(f"the table size must be 2 to 10^10 rows, got {self.rows}.")

    @classmethod
    def uniform(cls, categories, rows: int) -> PPShape:
        cats = tuple(str(c) for c in categories)
        return cls(cats, tuple(1.0 / max(len(cats), 1) for _ in cats), int(rows))

    def counts(self) -> dict[str, int]:
        """Expected counts (largest remainders: they add up to `rows`)."""
        raw = [s * self.rows for s in self.shares]
        base = [math.floor(r) for r in raw]
        left = self.rows - sum(base)
        order = sorted(range(len(raw)), key=lambda i: raw[i] - base[i], reverse=True)
        for i in order[:left]:
            base[i] += 1
        return {c: n for c, n in zip(self.categories, base, strict=True) if n > 0}

    def words(self) -> str:
        how = "the declared expected shares" if self.declared_shares else "an even spread"
        return f"{self.rows:,} rows over {len(self.categories)} public categories in {how}"


@dataclass(frozen=True)
class PPPlan:
    """Feasibility and expected error of one PP release (ρ1, ρ2, plan ε) on a shape."""

    rho1: Fraction
    rho2: Fraction
    plan_epsilon: float
    confidence: float
    feasible: bool
    reason: str | None  # why not, when infeasible
    per_value: tuple[tuple[str, float], ...]  # value -> half-width of its share (both parts)
    per_value_randomization: tuple[tuple[str, float], ...]  # the randomization's part alone
    randomization_error: float  # max over values, randomization only (share units)
    plan_error: float  # the plan's noisy counts alone (share units)
    subtables: tuple[dict, ...]  # size, domain size, retention
    cost: Cost
    basis: str

    @property
    def error(self) -> float:
        """Max over values of the share's half-width (share units: 0.02 = ±2 points)."""
        return max((e for _, e in self.per_value), default=math.inf)

    def describe(self) -> str:
        if not self.feasible:
            return (
                f"PP at rho1 = {self.rho1}, rho2 = {self.rho2} is not feasible on "
                f"{self.basis}: {self.reason}"
            )
        return (
            f"PP at rho1 = {self.rho1}, rho2 = {self.rho2} (plan epsilon {self.plan_epsilon:g}) "
            f"is expected to reconstruct every value's share within ±{self.error * 100:.2g} "
            f"percentage points at {self.confidence:.0%}; this rests on {self.basis}."
        )

    def to_json(self) -> dict:
        return {
            "tool": "pp",
            "rho1": str(self.rho1),
            "rho2": str(self.rho2),
            "plan_epsilon": self.plan_epsilon,
            "epsilon": self.cost.epsilon,
            "delta": self.cost.delta,
            "confidence": self.confidence,
            "feasible": self.feasible,
            "reason": self.reason,
            "expected_error": None if not self.feasible else self.error,
            "randomization_error": self.randomization_error,
            "plan_error": self.plan_error,
            "per_value": {v: e for v, e in self.per_value},
            "subtables": list(self.subtables),
            "basis": self.basis,
            "describe": self.describe(),
        }


def plan_pp(
    shape: PPShape,
    rho1: Fraction,
    rho2: Fraction,
    plan_epsilon: float = 1.0,
    confidence: float = 0.95,
    merge_policy: str = "none",
    accept_fallback: bool = False,
) -> PPPlan:
    """Feasibility and expected error of PP at (ρ1, ρ2) on `shape` (see the module docstring).
    Reads no data and charges nothing."""
    settings = ReleaseSettings(
        Fraction(rho1),
        Fraction(rho2),
        plan_epsilon=plan_epsilon,
        merge_policy=merge_policy,
        accept_fallback=accept_fallback,
        categories=shape.categories,
    )
    if not 0.5 <= confidence < 1:
        raise InputError(f"--confidence must be in [0.5, 1), got {confidence}.")
    basis = shape.words() + "; no data read beyond the row count, nothing charged"
    counts = shape.counts()
    plan_hw = settings.plan_mechanism.half_width(confidence) / shape.rows
    try:
        if len(counts) < 2:
            raise InputError("fewer than two categories have an expected count above zero.")
        plan = plan_partition(counts, settings.rho1, settings.rho2, merge_policy=merge_policy)
        subtables, _ = publishable_subtables(plan, accept_fallback)
        mechanisms = subtable_mechanisms(subtables, settings.rho2)
    except InputError as err:
        return PPPlan(
            settings.rho1, settings.rho2, settings.plan_epsilon, confidence, False,
            str(err), (), (), math.inf, plan_hw, (), settings.cost, basis,
        )  # fmt: skip
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    variance: dict[str, Fraction] = {v: Fraction(0) for v in counts}
    for sub, mech in zip(subtables, mechanisms, strict=True):
        p = mech.retention
        q = (1 - p) / mech.domain_size
        for value in sub.domain:
            variance[value] += true_variance(sub.counts.get(value, 0), sub.size, p, q)
    randomization = [(v, z * math.sqrt(float(var)) / shape.rows) for v, var in variance.items()]
    per_value = [(v, math.hypot(rr, plan_hw)) for v, rr in randomization]
    worst_rr = max(rr for _, rr in randomization)
    rows = tuple(
        {"size": s.size, "domain_size": m.domain_size, "retention": str(m.retention),
         "retention_float": float(m.retention)}
        for s, m in zip(subtables, mechanisms, strict=True)
    )  # fmt: skip
    return PPPlan(
        settings.rho1, settings.rho2, settings.plan_epsilon, confidence, True, None,
        tuple(per_value), tuple(randomization), worst_rr, plan_hw, rows, settings.cost, basis,
    )  # fmt: skip


@dataclass(frozen=True)
class RhoAnswer:
    """For one ρ1: the smallest ρ2 on the grid k/1000 whose plan meets the target error."""

    rho1: Fraction
    rho2: Fraction | None
    plan: PPPlan | None


def strictest_rho2(
    shape: PPShape,
    rho1: Fraction,
    target_error: float,
    plan_epsilon: float = 1.0,
    confidence: float = 0.95,
    merge_policy: str = "none",
) -> RhoAnswer:
    """The smallest ρ2 in (ρ1, 1) on the grid k/1000 at which PP is feasible and its expected
    error is at most `target_error` (the most privacy that still meets it; a larger ρ2 raises
    every retention probability, so the error falls as ρ2 grows). Bisection, then verified."""
    if not (math.isfinite(target_error) and 0 < target_error < 1):
        raise InputError(
            f"--target-error is a share in (0, 1) (0.02 = ±2 points), got {target_error}."
        )
    rho1 = Fraction(rho1)

    def meets(k: int) -> bool:
        plan = plan_pp(shape, rho1, Fraction(k, RHO_STEPS), plan_epsilon, confidence, merge_policy)
        return plan.feasible and plan.error <= target_error

    lo = math.floor(rho1 * RHO_STEPS) + 1  # first grid point above ρ1
    hi = RHO_STEPS - 1
    if lo > hi or not meets(hi):
        return RhoAnswer(rho1, None, None)
    while lo < hi:
        mid = (lo + hi) // 2
        if meets(mid):
            hi = mid
        else:
            lo = mid + 1
    rho2 = Fraction(lo, RHO_STEPS)
    return RhoAnswer(rho1, rho2, plan_pp(shape, rho1, rho2, plan_epsilon, confidence, merge_policy))


def rho_frontier(
    shape: PPShape,
    target_error: float,
    rho1_values=RHO1_FRONTIER,
    plan_epsilon: float = 1.0,
    confidence: float = 0.95,
) -> tuple[RhoAnswer, ...]:
    """`strictest_rho2` for several ρ1 (the officer's menu)."""
    return tuple(
        strictest_rho2(shape, r, target_error, plan_epsilon, confidence) for r in rho1_values
    )
