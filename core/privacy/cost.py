"""What a release costs: (ε, δ) under basic composition, and PP's (ρ1, ρ2) claim; and the one
budget check (`check_budget`) every refusal takes — the registry's charge, per-query caps, a set
of releases, budget plans and the pages' release buttons: it names the dimension(s) of (ε, δ)
that do not fit, against what remains of a total or a per-query cap, with a fix that works
(values rounded down to lower to, up to raise a total to)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

from core.limits import EPSILON_MIN  # noqa: F401 - the floor every release takes, re-exported


@dataclass(frozen=True)
class Cost:
    """(ε, δ) under basic composition: costs add up."""

    epsilon: float = 0.0
    delta: float = 0.0

    def __post_init__(self):
        e, d = float(self.epsilon), float(self.delta)
        if not (math.isfinite(e) and e >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0, got {self.epsilon}")
        if not (math.isfinite(d) and 0 <= d < 1):
            raise ValueError(f"delta must be in [0, 1), got {self.delta}")
        object.__setattr__(self, "epsilon", e)
        object.__setattr__(self, "delta", d)

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.epsilon + other.epsilon, min(self.delta + other.delta, 1 - 1e-300))

    def fits(self, budget: Cost, slack: float = 1e-9) -> bool:
        """True when this cost is within `budget` (with float slack: 0.1 + 0.2 vs 0.3)."""
        return (
            self.epsilon <= budget.epsilon * (1 + slack) + slack
            and self.delta <= budget.delta * (1 + slack) + 1e-15
        )

    @property
    def is_zero(self) -> bool:
        return self.epsilon == 0 and self.delta == 0

    @classmethod
    def of(cls, mechanisms) -> Cost:
        """The basic composition (sum) of the costs of `mechanisms`: what a release charges
        is derived from the very objects that draw its noise."""
        total = cls()
        for m in mechanisms:
            total = total + m.cost
        return total


ZERO = Cost()


@dataclass(frozen=True)
class RhoClaim:
    """(ρ1, ρ2)-privacy (PP balancing): a belief ≤ ρ1 before the release stays ≤ ρ2 after."""

    rho1: Fraction
    rho2: Fraction

    def __post_init__(self):
        r1, r2 = Fraction(self.rho1), Fraction(self.rho2)
        if not 0 < r1 < r2 < 1:
            raise ValueError(f"need 0 < rho1 < rho2 < 1, got {r1}, {r2}")
        object.__setattr__(self, "rho1", r1)
        object.__setattr__(self, "rho2", r2)


# -- one budget check: which of (ε, δ) a request does not fit, and a fix that works ----------
class Dimension(StrEnum):
    """One of the two parameters of an (ε, δ) budget."""

    EPSILON = "epsilon"
    DELTA = "delta"

    def of(self, cost: Cost) -> float:
        return cost.epsilon if self is Dimension.EPSILON else cost.delta


EPSILON_SLACK = 1e-9  # absolute float slack on sums of ε against a total (0.1 + 0.2 vs 0.3)
DELTA_SLACK = 1e-15  # absolute float slack on sums of δ
CAP_SLACK = 1e-12  # relative slack against a per-query cap
NO_DELTA_RELEASES = (
    "DP SQL with PUBLIC_GROUPS, PP with the owner's declared categories, or a location histogram"
)


def round_down(x: float, digits: int = 6) -> float:
    """`x` to `digits` significant digits, never above `x` beyond float slack, so "lower to
    <= this" always fits."""
    if x <= 0 or not math.isfinite(x):
        return max(0.0, x) if math.isfinite(x) else x
    q = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return float(f"{math.floor(x / q + 1e-6) * q:.{digits}g}")


def round_up(x: float, digits: int = 6) -> float:
    """`x` to `digits` significant digits, never below `x` beyond float slack."""
    if x <= 0 or not math.isfinite(x):
        return max(0.0, x) if math.isfinite(x) else x
    q = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return float(f"{math.ceil(x / q - 1e-6) * q:.{digits}g}")


@dataclass(frozen=True)
class Shortage:
    """One dimension a request does not fit: what it needs and the most it may spend, bound
    either by what remains of a total or by a per-query cap."""

    dimension: Dimension
    need: float
    allowed: float  # the most this request may spend in this dimension
    by_cap: bool  # the binding limit is the per-query cap (else what remains of the total)
    spent: float | None = None  # of the total (None: a cap with no running total)
    total: float | None = None
    cap: float | None = None  # a per-query cap the request is also above (what remains binds)

    @property
    def name(self) -> str:
        return self.dimension.value

    @property
    def exhausted(self) -> bool:
        """Nothing at all is left in this dimension."""
        return self.allowed <= (
            EPSILON_SLACK if self.dimension is Dimension.EPSILON else DELTA_SLACK
        )

    def words(self, cap_source: str) -> str:
        d, need = self.name, f"{self.need:g}"
        if self.by_cap:
            return (
                f"this request needs {d} {need}, above the per-query cap max_{d}_per_query = "
                f"{self.allowed:g} ({cap_source})"
            )
        used = f"{self.spent:g} of {self.total:g} used"
        state = "spent" if self.exhausted else "short"
        also = (
            ""
            if self.cap is None
            else f", also above the per-query cap max_{d}_per_query = {self.cap:g} ({cap_source})"
        )
        return f"{d} is {state}: {used}; this request needs {d} {need}{also}"


@dataclass(frozen=True)
class BudgetShortfall:
    """A request that does not fit: the dimension(s) that ran out (one line per reason) and a
    fix that works. Its `str` is the refusal's message."""

    need: Cost
    shortages: tuple[Shortage, ...]
    remaining: Cost | None = None  # what is left of the totals (None: caps only)
    total: Cost | None = None  # the totals (None: caps only)
    subject: str = ""  # e.g. "dataset 'sales'"
    cap_source: str = "the per-query cap"
    owner_command: str | None = None  # e.g. "dpx dataset budget sales": raises a total
    raise_cap: str | None = "ask the owner for a higher per-query cap"

    @property
    def dimensions(self) -> tuple[Dimension, ...]:
        return tuple(s.dimension for s in self.shortages)

    def shortage(self, dimension: Dimension) -> Shortage | None:
        return next((s for s in self.shortages if s.dimension is dimension), None)

    @property
    def largest_fitting(self) -> Cost:
        """The request lowered (rounded down) to the most it may spend in each short dimension."""
        eps, delta = self.need.epsilon, self.need.delta
        for s in self.shortages:
            if s.dimension is Dimension.EPSILON:
                eps = round_down(s.allowed)
            else:
                delta = round_down(s.allowed)
        return Cost(eps, delta)

    @property
    def raised_totals(self) -> Cost | None:
        """Totals (rounded up) at which this request fits what remains; None when a per-query
        cap binds or there is no running total."""
        if any(s.by_cap or s.total is None for s in self.shortages):
            return None
        eps = delta = None
        for s in self.shortages:
            value = round_up(s.spent + s.need)
            if s.dimension is Dimension.EPSILON:
                eps = value
            else:
                delta = value
        return Cost(eps or 0.0, delta or 0.0)

    def fix(self) -> str:
        """Ways out that work, each enough on its own."""
        ways = []
        lowered = [s for s in self.shortages if not s.exhausted]
        if len(lowered) == len(self.shortages):
            ways.append(
                "lower "
                + " and ".join(f"{s.name} to <= {round_down(s.allowed):g}" for s in lowered)
            )
        delta = self.shortage(Dimension.DELTA)
        eps = self.shortage(Dimension.EPSILON)
        if delta is not None and (eps is None or not eps.exhausted):
            lower_eps = "" if eps is None else f" with epsilon <= {round_down(eps.allowed):g}"
            ways.append(f"use a release that needs no delta{lower_eps} (e.g. {NO_DELTA_RELEASES})")
        raised = self.raised_totals
        if raised is not None:
            names = " and ".join(s.name for s in self.shortages)
            flags = " ".join(f"--{s.name} {s.dimension.of(raised):g}" for s in self.shortages)
            cmd = f" (`{self.owner_command} {flags}`)" if self.owner_command else ""
            ways.append(f"ask the owner to raise {names}{cmd}")
        elif self.raise_cap and any(s.by_cap for s in self.shortages):
            ways.append(self.raise_cap)
        return "Fix: " + "; or ".join(ways) + "."

    def __str__(self) -> str:
        where = f" of {self.subject}" if self.subject else ""
        what = "per-query cap" if all(s.by_cap for s in self.shortages) else "privacy budget"
        reasons = "; ".join(s.words(self.cap_source) for s in self.shortages)
        fits = ""
        if len(self.shortages) == 1:
            other = (
                Dimension.DELTA
                if self.shortages[0].dimension is Dimension.EPSILON
                else Dimension.EPSILON
            )
            if other.of(self.need) > 0:
                fits = f" ({other.value} {other.of(self.need):g} fits)"
        state = ""
        if self.total is not None and self.remaining is not None:
            state = f"; {remaining_words(self.remaining, self.total)}"
        return f"{what}{where} exceeded: {reasons}{fits}{state}. Nothing was charged. {self.fix()}"


def remaining_words(remaining: Cost, total: Cost) -> str:
    """'remaining epsilon 3 of 3, delta 0 of 0': one way to say what is left of a budget."""
    return (
        f"remaining epsilon {remaining.epsilon:g} of {total.epsilon:g}, "
        f"delta {remaining.delta:g} of {total.delta:g}"
    )


def check_budget(
    need: Cost,
    *,
    spent: Cost | None = None,
    total: Cost | None = None,
    max_epsilon: float | None = None,
    max_delta: float | None = None,
    subject: str = "",
    cap_source: str = "the per-query cap",
    owner_command: str | None = None,
    raise_cap: str | None = "ask the owner for a higher per-query cap",
) -> BudgetShortfall | None:
    """The one budget check: `need` against what remains of `total` after `spent` (both or
    neither) and against the per-query caps (None: no cap). None when it fits; otherwise the
    dimension(s) that do not fit, each against its binding limit (the cap or what remains,
    whichever is lower), with a fix that works."""
    remaining = None
    if total is not None:
        spent = spent or ZERO
        remaining = Cost(
            max(0.0, total.epsilon - spent.epsilon), max(0.0, min(total.delta - spent.delta, 0.999))
        )
    shortages = []
    for dim, cap in ((Dimension.EPSILON, max_epsilon), (Dimension.DELTA, max_delta)):
        n = dim.of(need)
        left = None if remaining is None else dim.of(remaining)
        slack = EPSILON_SLACK if dim is Dimension.EPSILON else DELTA_SLACK
        over_cap = cap is not None and n > cap * (1 + CAP_SLACK)
        over_left = left is not None and n > left + slack
        if not (over_cap or over_left):
            continue
        by_cap = over_cap and (left is None or cap <= left)
        shortages.append(
            Shortage(
                dim,
                n,
                cap if by_cap else left,
                by_cap,
                None if spent is None else dim.of(spent),
                None if total is None else dim.of(total),
                cap if over_cap and not by_cap else None,
            )
        )
    if not shortages:
        return None
    return BudgetShortfall(
        need, tuple(shortages), remaining, total, subject, cap_source, owner_command, raise_cap
    )
