"""What a DP SQL planner is asked for, and how a planned query's accuracy is read.

A target names one aggregate of the query (its output name) and asks for

- `NAME=50`          a noise-only half-width of ±50 (value units) at the plan's confidence;
- `NAME=50@200`      the same, for groups of at least 200 units — which also asks that such a
                     group survives partition selection with at least that confidence;
- `NAME=10%@200`     a relative error: ±10 % of a group of 200 units (counts only: a count of
                     units or rows is at least the number of units in the group).

Accuracy is read off the planned `Aggregate` objects and their mechanisms — `half_width` of a
count or sum, the two statistics of an AVG at the group size, `survival` of the noisy
threshold — never re-derived from formulas that could drift from what will draw the noise.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from core.dpsql.aggregates.average import Average
from core.dpsql.aggregates.base import Aggregate
from core.dpsql.parse.ir import AggKind
from core.dpsql.plan.planner import Plan
from core.dpsql.plan.statistics import Component
from core.errors import InputError

# COUNT(*) / COUNT(x) without contribution bounds: the bound U of one unit's rows in a group is
# chosen privately at release, and the released count's half-width is U times its count
# mechanism's half-width at U = 1 — the accuracy DP SQL's explain states for that mechanism.
# The planner plans that stated accuracy (per row a unit adds to a group) and says so.
IMPLICIT_COUNT_KINDS = (AggKind.IMPLICIT_COUNT_ROWS, AggKind.IMPLICIT_COUNT_VALUES)
COUNT_KINDS = (
    AggKind.COUNT_UNITS,
    AggKind.COUNT_ROWS,
    AggKind.COUNT_VALUES,
    *IMPLICIT_COUNT_KINDS,
)
_TARGET = re.compile(
    r"^\s*(?P<name>[^=@]+?)\s*=\s*(?P<value>[0-9.eE+-]+)\s*(?P<pct>%)?\s*"
    r"(?:@\s*(?P<units>[0-9]+))?\s*$"
)
MAX_UNITS = 10**12


@dataclass(frozen=True)
class SqlTarget:
    """One aggregate's accuracy target (see the module docstring for the spellings)."""

    aggregate: str
    half_width: float | None = None  # absolute ± in value units
    relative: float | None = None  # a fraction (0.1 = 10 %) of a group of `min_units` units
    min_units: int | None = None  # groups of at least this many units

    def __post_init__(self):
        if (self.half_width is None) == (self.relative is None):
            raise InputError(f"target for '{self.aggregate}': give ±HALF_WIDTH or a relative %.")
        if self.relative is not None and self.min_units is None:
            raise InputError(
                f"target '{self.aggregate}={self.relative:.0%}' is relative to a group size: "
                f"write e.g. {self.aggregate}={self.relative * 100:g}%@200 (groups of >= 200 units)."
            )

    def required(self) -> float:
        """The largest acceptable half-width, in value units."""
        if self.half_width is not None:
            return self.half_width
        return self.relative * self.min_units

    def words(self, confidence: float) -> str:
        size = f" for groups of at least {self.min_units} units" if self.min_units else ""
        if self.relative is not None:
            return f"{self.aggregate} within ±{self.relative:.0%} at {confidence:.0%}{size}"
        return f"{self.aggregate} within ±{self.half_width:g} at {confidence:.0%}{size}"

    def to_json(self) -> dict:
        return {
            "aggregate": self.aggregate,
            "half_width": self.half_width,
            "relative": self.relative,
            "min_units": self.min_units,
        }


def parse_target(text: str) -> SqlTarget:
    """`NAME=HALF_WIDTH[@UNITS]` or `NAME=PCT%@UNITS` (one line on a bad spelling)."""
    m = _TARGET.match(str(text))
    fix = "Fix: write e.g. --target total=50, --target total=50@200 or --target n=10%@200."
    if m is None:
        raise InputError(f"cannot read the target '{text}'. {fix}")
    try:
        value = float(m["value"])
    except ValueError:
        raise InputError(f"cannot read the number in target '{text}'. {fix}") from None
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"target '{text}': the accuracy must be a number > 0. {fix}")
    units = None if m["units"] is None else int(m["units"])
    if units is not None and not 1 <= units <= MAX_UNITS:
        raise InputError(f"target '{text}': the group size must be 1 to {MAX_UNITS:,} units.")
    name = m["name"].strip()
    if m["pct"]:
        if value >= 100:
            raise InputError(f"target '{text}': a relative error must be below 100 %. {fix}")
        return SqlTarget(name, relative=value / 100, min_units=units)
    return SqlTarget(name, half_width=value, min_units=units)


def find_aggregate(plan: Plan, target: SqlTarget) -> Aggregate:
    """The planned aggregate a target names (by its output name, case-insensitive)."""
    for agg in plan.aggregates:
        if agg.name.lower() == target.aggregate.lower():
            return agg
    names = ", ".join(a.name for a in plan.aggregates)
    raise InputError(
        f"the query has no aggregate named '{target.aggregate}' (its aggregates: {names}). "
        "Fix: name the target after an aggregate's output name (AS ...)."
    )


def user_words(agg: Aggregate) -> str:
    """The aggregate as the user wrote it (e.g. `COUNT(*)`), never an internal kind name."""
    span = getattr(agg.spec, "span", None)
    text = getattr(span, "text", None)
    return text or getattr(agg, "ZETA", None) or agg.name


def implicit_note(agg: Aggregate) -> str | None:
    """What a plan of a count without contribution bounds assumes (None for other kinds)."""
    if agg.KIND not in IMPLICIT_COUNT_KINDS:
        return None
    words = user_words(agg)
    call = words.rstrip().removesuffix(")")
    bounded = (
        f"{call}, 1)"
        if call.upper().startswith("ANON_")
        else f"{call}, contribution_bounds_per_group => (0, 1))"
    )
    return (
        f"'{agg.name}' ({words}, no contribution bounds): its half-width is planned for a bound "
        "of 1 row per unit and group, as its count mechanism states; the release chooses the "
        "bound U privately and its interval is U times as wide. For a width that holds "
        f"whatever the data, bound it, e.g. {bounded}."
    )


def check_plannable(agg: Aggregate, target: SqlTarget) -> None:
    """Refuse (one line) a target the planner cannot read off the mechanisms."""
    kind = agg.KIND
    if target.relative is not None and kind not in COUNT_KINDS:
        raise InputError(
            f"a relative target needs a count (its value is at least the group's units); "
            f"'{agg.name}' is {user_words(agg)}. Fix: give ±HALF_WIDTH, e.g. {agg.name}=50."
        )
    if isinstance(agg, Average):
        if target.min_units is None:
            raise InputError(
                f"the error of AVG '{agg.name}' shrinks with the group size: add @UNITS, e.g. "
                f"{agg.name}={target.half_width:g}@200 (groups of >= 200 units)."
            )
        return
    if kind not in (*COUNT_KINDS, AggKind.SUM):
        why = (
            "a quantile's error is in ranks: in value units it depends on how the data spread"
            if kind is AggKind.QUANTILE
            else "its interval depends on the group's own mean and spread, not only on public "
            "parameters"
        )
        raise InputError(
            f"'{agg.name}' ({user_words(agg)}) has no public half-width to plan for ({why}). "
            "Fix: target the counts, sums and averages of the query; this aggregate keeps its "
            "share."
        )


def accuracy(agg: Aggregate, target: SqlTarget, confidence: float) -> float:
    """The planned half-width (value units) of `agg` at `confidence`, for the target's group
    size where it matters (AVG). Read off the aggregate's mechanisms."""
    if isinstance(agg, Average):
        return average_half_width(agg, int(target.min_units), confidence)
    if agg.KIND in IMPLICIT_COUNT_KINDS:  # at a bound of 1 row per unit (see the note above)
        return float(agg.statistic(Component.COUNT).half_width(confidence))
    width = agg.half_width(confidence)
    if width is None:  # check_plannable refuses these first
        raise InputError(f"'{agg.name}' has no public half-width.")
    return float(width)


def average_half_width(agg: Average, units: int, confidence: float) -> float:
    """Noise-only half-width of AVG for a group of `units` units whose values may be anywhere
    in [L, U]: with probability >= `confidence` both noisy statistics are within their
    half-widths at (1 + confidence)/2 each (Bonferroni, as the release's interval), and the
    estimate (s + Zs)/(n + Zn) + midpoint then differs from the true average by at most the
    worst corner below (capped at U - L: the estimate is clamped to [L, U])."""
    count, total = agg.statistic(Component.COUNT), agg.statistic(Component.SUM)
    each = 1 - (1 - confidence) / 2
    hn, hs = float(count.half_width(each)), float(total.half_width(each))
    span = agg.spec.upper - agg.spec.lower
    if units <= hn:
        return float(span)
    worst = 0.0
    for s_true in (-units * span / 2, units * span / 2):
        for n_noisy in (units - hn, units + hn):
            for s_noisy in (s_true - hs, s_true + hs):
                worst = max(worst, abs(s_noisy / n_noisy - s_true / units))
    return float(min(worst, span))


def survival(plan: Plan, units: int) -> float:
    """P(a group of `units` units is released) from the plan's `NoisyThreshold` object (1 with
    public groups; 0 below min_privacy_units_per_group)."""
    if plan.selection is None:
        return 1.0
    floor = plan.query.options.min_privacy_units_per_group or 0
    return 0.0 if units < floor else float(plan.selection.mechanism.survival(units))
