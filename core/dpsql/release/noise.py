"""Noise, partition selection, estimates and 95% intervals for the cross_user table (spec
§2.7-§3.5). Runs in Python on the small per-partition table, never in SQL.

Partition selection draws first (the `NoisyThreshold`, or the COUNT(DISTINCT uid) it reuses),
partitions whose noisy unit count is below the threshold are dropped, then each aggregate
draws its own statistics and states a noise-only interval (`Aggregate.estimate`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.dpsql.aggregates.base import exact_integers
from core.dpsql.parse.ir import ROW_ID
from core.dpsql.plan.planner import Plan
from core.dpsql.plan.threshold import ThresholdInfo
from core.privacy import Accountant


@dataclass
class Released:
    """Released rows (k<i>, v<j> columns), their intervals, and what thresholding did."""

    table: pd.DataFrame
    intervals: dict[int, np.ndarray]  # aggregate index -> (rows, 2) [low, high]
    threshold: ThresholdInfo | None
    partitions_released: int
    notes: list[str] = field(default_factory=list)


def release(plan: Plan, cross_user: pd.DataFrame, accountant: Accountant) -> Released:
    """Noise, threshold and intervals for the exact per-partition table `cross_user`.

    Privacy claim (unit level, add/remove one unit with all its rows): every statistic gets
    noise from its own mechanism object (discrete Laplace, scale b = C_u·Δ/ε_i in integer
    units, or the exponential mechanism for quantiles at ε_i/C_u per partition); partitions pass
    only if their noisy unit count reaches T (the `NoisyThreshold`). Altogether
    (Σ ε_i + ε_τ, δ)-DP = (ε, δ)-DP: the composition of `plan.drawing_order()`, which is what
    the caller charged and what `accountant.mechanisms` holds afterwards.
    """
    q = plan.query
    data, reused_units = _select(plan, cross_user, accountant)
    rows = len(data)
    out = pd.DataFrame({f"k{i}": data[f"k{i}"] for i in range(len(q.keys))})
    intervals: dict[int, np.ndarray] = {}
    for agg in plan.aggregates:
        reused = reused_units if reused_units is not None and _is_reused(plan, agg) else None
        value, iv = agg.estimate(data, accountant, reused)
        out[f"v{agg.index}"] = np.asarray(value, dtype=float) if rows else np.zeros(0)
        intervals[agg.index] = iv.reshape(rows, 2) if rows else np.zeros((0, 2))
    out[ROW_ID] = np.arange(rows)
    notes = [n for n in (agg.release_note() for agg in plan.aggregates) if n]
    return Released(out, intervals, plan.threshold_info(), rows, notes)


def _is_reused(plan: Plan, agg) -> bool:
    selection = plan.selection
    return (
        selection is not None
        and selection.mechanism.reuses is not None
        and (selection.aggregate == agg.index)
    )


def _select(
    plan: Plan, cross_user: pd.DataFrame, accountant: Accountant
) -> tuple[pd.DataFrame, np.ndarray | None]:
    """The partitions to release, and the reused noisy unit counts of the kept ones.

    PUBLIC_GROUPS: every public key is released (empty groups as pure noise), nothing drawn.
    Otherwise: the selection's own draw, or the reused COUNT(DISTINCT uid)'s draw followed by
    the threshold; with a pre-threshold m also an exact count >= m (Google's rule; the
    mechanism's threshold already includes the shift m - 1)."""
    selection = plan.selection
    if selection is None:
        data = cross_user.copy()
        data["n_units"] = data["n_units"].fillna(0).astype("int64")
        return data, None
    data = cross_user[cross_user["n_units"] > 0].reset_index(drop=True)
    units = exact_integers(data["n_units"].tolist())
    threshold = selection.mechanism
    if threshold.reuses is None:
        noisy_units, keep = threshold.draw(accountant, units)
    else:  # the query's COUNT(DISTINCT uid) draws; the threshold selects on its output
        noisy_units = plan.reused_units().mechanism.draw(accountant, units)
        keep = threshold.select(accountant, noisy_units)
    m = plan.query.options.min_privacy_units_per_group
    if m:
        keep = keep & (units >= m)
    data = data[keep].reset_index(drop=True)
    reused = noisy_units[keep].astype(float) if threshold.reuses is not None else None
    return data, reused
