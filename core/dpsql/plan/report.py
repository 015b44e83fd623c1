"""What a plan states from public parameters only, for explain / dry run: one row per
mechanism (ε, δ, sensitivity, scale, 95% half-width), each aggregate's half-width, and the
survival curve of partition selection — all read off the mechanism objects themselves."""

from __future__ import annotations

from core.dpsql.aggregates.base import CONFIDENCE
from core.dpsql.plan.planner import Plan
from core.dpsql.plan.threshold import keep_probability_continuous
from core.privacy import discrete_laplace_half_width


def budget_rows(plan: Plan) -> list[dict]:
    """The budget split as a table: one row per mechanism with Δ, scale and 95% half-width
    (value units: ÷ 2^j), partition selection last."""
    rows = []
    for agg in plan.aggregates:
        for s in agg.statistics:
            rows.append(
                {
                    "aggregate": agg.name,
                    "label": s.mechanism.label,
                    "kind": agg.KIND.value,
                    "component": s.component.value,
                    "mechanism": s.mechanism.kind.value,
                    "epsilon": s.epsilon,
                    "delta": s.mechanism.cost.delta,
                    "sensitivity": s.sensitivity / 2.0**s.exponent,
                    "scale": s.value_scale,
                    "exponent_j": s.exponent,
                    "half_width_95": s.half_width(CONFIDENCE),
                }
            )
    selection = plan.selection
    if selection is None:
        return rows
    m = selection.mechanism
    reused = "units" if m.reuses is None else f"reuses {plan.aggregates[selection.aggregate].name}"
    rows.append(
        {
            "aggregate": "partition selection (unit count)",
            "label": m.label,
            "kind": "THRESHOLD",
            "component": reused,
            "mechanism": m.kind.value,
            "epsilon": m.cost.epsilon,
            "delta": m.cost.delta,
            "sensitivity": 1.0,
            "scale": m.scale,
            "exponent_j": 0,
            "half_width_95": discrete_laplace_half_width(m.scale, CONFIDENCE),
        }
    )
    return rows


def half_widths(plan: Plan) -> dict[int, float | None]:
    """Public 95% half-widths per aggregate (counts and sums; None where no single number)."""
    return {a.index: a.half_width(CONFIDENCE) for a in plan.aggregates}


def survival(plan: Plan, units: list[int]) -> list[dict]:
    """P(kept | n) from the `NoisyThreshold` object itself (its threshold is T + m - 1 with a
    pre-threshold m; below m nothing is kept), with the continuous-Laplace teaching view."""
    if plan.selection is None:
        return []
    selection = plan.selection.mechanism
    m = plan.query.options.min_privacy_units_per_group or 0
    return [
        {
            "units": int(n),
            "keep_probability": selection.survival(n) if n >= m else 0.0,
            "keep_probability_continuous": (
                keep_probability_continuous(n, selection.threshold, selection.scale)
                if n >= m
                else 0.0
            ),
        }
        for n in units
    ]
