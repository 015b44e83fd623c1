"""Noise, thresholding, estimates and 95% intervals for the cross_user table (spec §2.7-§3.5).

Runs in Python on the small per-partition table: integer statistics get discrete Laplace noise
of scale C_u·Δ/ε_i through `Noise`, partitions whose noisy unit count is below the integer
threshold T are dropped, and every released value gets a noise-only 95% interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import product

import numpy as np
import pandas as pd

from core.dpsql.ir import AggKind
from core.dpsql.limits import ROW_ID
from core.dpsql.mechanisms import Component, Statistic
from core.dpsql.quantile import private_quantiles
from core.dpsql.rewrite import StagedPlan, midpoints
from core.dpsql.threshold import engine_threshold, opendp_threshold_delta, realised_delta, tau
from core.privacy import Accountant, discrete_laplace_half_width

SATURATE = 2**62
CONFIDENCE = 0.95


@dataclass(frozen=True)
class ThresholdInfo:
    tau: float
    integer: int
    epsilon: float
    scale: float
    delta: float
    realised_delta: float


def threshold_info(plan: StagedPlan) -> ThresholdInfo | None:
    """tau, T and the realised delta; None with PUBLIC_GROUPS (nothing is thresholded).

    Privacy claim: the unit count is noised with discrete Laplace of scale b = C_u/ε_τ, taken
    from the `NoisyThreshold` object itself (the object that selects partitions and is
    charged); T is the smallest integer with P(1 + Z >= T) <= δ_adj, so a partition that exists
    only because of one unit is released with probability <= δ over its C_u partitions."""
    tm = plan.threshold_mechanism
    if tm is None:
        return None
    delta = plan.query.options.delta
    cu = tm.max_groups
    scale = tm.mechanism.scale
    eps_tau = float(plan.threshold_epsilon)
    t = engine_threshold(eps_tau, delta, cu)
    own = realised_delta(t, eps_tau, cu)
    try:
        cross = opendp_threshold_delta(t, scale, cu)
    except Exception:  # OpenDP rejects extreme parameters (e.g. T beyond i64); ours stands
        cross = 0.0
    return ThresholdInfo(tau(eps_tau, delta, cu), t, eps_tau, scale, delta, max(own, cross))


@dataclass
class Released:
    """Released rows (k<i>, v<j> columns), their intervals, and what thresholding did."""

    table: pd.DataFrame
    intervals: dict[int, np.ndarray]  # aggregate index -> (rows, 2) [low, high]
    threshold: ThresholdInfo | None
    partitions_released: int
    notes: list[str] = field(default_factory=list)


def _noisy(values: list, stat: Statistic, accountant: Accountant) -> np.ndarray:
    """Exact integers + the statistic's discrete Laplace draw, as floats."""
    return stat.mechanism.draw(accountant, _exact(values)).astype(float)


def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _half(m: Statistic, confidence: float) -> float:
    return m.half_width(confidence)


def release(plan: StagedPlan, cross_user: pd.DataFrame, accountant: Accountant) -> Released:
    """Noise, threshold and intervals for the exact per-partition table `cross_user`.

    Privacy claim (unit level, add/remove one unit with all its rows): every statistic gets
    noise from its own mechanism object (discrete Laplace, scale b = C_u·Δ/ε_i in integer
    units, or the exponential mechanism for quantiles at ε_i/C_u per partition); partitions pass
    only if their noisy unit count reaches T (the `NoisyThreshold`). Altogether
    (Σ ε_i + ε_τ, δ)-DP = (ε, δ)-DP: the composition of `plan.drawing_order()`, which is what
    the caller charged and what `accountant.mechanisms` holds afterwards.
    """
    q = plan.query
    th = threshold_info(plan)
    tm = plan.threshold_mechanism
    by_agg: dict[int, dict[str, Statistic]] = {}
    for m in plan.mechanisms:
        by_agg.setdefault(m.aggregate, {})[m.component] = m
    reused_units = None
    if tm is None:  # PUBLIC_GROUPS: every public key is released, empty ones as pure noise
        data = cross_user.copy()
        data["n_units"] = data["n_units"].fillna(0).astype("int64")
    else:
        data = cross_user[cross_user["n_units"] > 0].reset_index(drop=True)
        units = data["n_units"].tolist()
        selection = tm.mechanism
        if selection.reuses is None:
            noisy_units, keep = selection.draw(accountant, _exact(units))
        else:  # the query's COUNT(DISTINCT uid) draws; the threshold selects on its output
            reused = by_agg[tm.aggregate][Component.UNITS]
            noisy_units = reused.mechanism.draw(accountant, _exact(units))
            keep = selection.select(accountant, noisy_units)
        m = q.options.min_privacy_units_per_group
        if m:  # Google's pre-threshold: exact count >= m (the noisy one is shifted by m - 1)
            keep = keep & (np.asarray(units, dtype=np.int64) >= m)
        data = data[keep].reset_index(drop=True)
        if selection.reuses is not None:
            reused_units = noisy_units[keep].astype(float)
    rows = len(data)
    out = pd.DataFrame({f"k{i}": data[f"k{i}"] for i in range(len(q.keys))})
    intervals: dict[int, np.ndarray] = {}
    for i, agg in enumerate(q.aggregates):
        mech = by_agg[i]
        if agg.kind == AggKind.COUNT_UNITS:
            stat = mech[Component.UNITS]
            value = (
                reused_units
                if reused_units is not None and tm.aggregate == i
                else _noisy(data["n_units"].tolist(), stat, accountant)
            )
            value = np.maximum(value, 0)
            h = _half(stat, CONFIDENCE)
            iv = np.column_stack([np.maximum(value - h, 0), value + h])
        elif agg.kind in (AggKind.COUNT_ROWS, AggKind.COUNT_VALUES, AggKind.SUM):
            m = mech[Component.COUNT if agg.kind != AggKind.SUM else Component.SUM]
            value = _noisy(data[f"s{i}"].tolist(), m, accountant) / 2.0**m.exponent
            if agg.lower >= 0:
                value = np.maximum(value, 0)
            h = _half(m, CONFIDENCE)
            iv = np.column_stack([value - h, value + h])
            if agg.lower >= 0:
                iv[:, 0] = np.maximum(iv[:, 0], 0)
        elif agg.kind == AggKind.AVG:
            value, iv = _average(agg, mech, data, i, accountant)
        elif agg.kind in (AggKind.VAR, AggKind.STDDEV):
            value, iv = _variance(agg, mech, data, i, accountant)
        else:
            m = mech[Component.QUANTILE]
            value = private_quantiles(
                m.mechanism,
                accountant,
                data[f"l{i}"].tolist(),
                agg.lower,
                agg.upper,
                agg.p,
                q.options.max_rows_per_group,
                q.options.quantile_grid_size,
            )
            iv = np.full((rows, 2), np.nan)
        out[f"v{i}"] = np.asarray(value, dtype=float) if rows else np.zeros(0)
        intervals[i] = iv.reshape(rows, 2) if rows else np.zeros((0, 2))
    out[ROW_ID] = np.arange(rows)
    return Released(out, intervals, th, rows)


def _exact(values: list) -> np.ndarray:
    """Exact integers (NULL = 0) as int64, saturated at ±2^62 so that adding noise of scale
    below 2^26 never overflows (no accepted query sums that far: bounds keep each unit's
    integerised contribution below 2^31)."""
    return np.array(
        [0 if _missing(v) else min(max(int(v), -SATURATE), SATURATE) for v in values],
        dtype=np.int64,
    )


def _average(agg, mech, data, i, accountant):
    mc, ms = mech[Component.COUNT], mech[Component.SUM]
    mid = (agg.lower + agg.upper) / 2
    n = _noisy(data[f"n{i}"].tolist(), mc, accountant)
    s = _noisy(data[f"s{i}"].tolist(), ms, accountant) / 2.0**ms.exponent
    value = np.clip(s / np.maximum(1.0, n) + mid, agg.lower, agg.upper)
    conf = 1 - (1 - CONFIDENCE) / 2
    hn, hs = _half(mc, conf), _half(ms, conf)
    lows, highs = [], []
    for nn, ss in zip(n, s, strict=True):
        corners = [
            sv / max(1.0, nv) + mid for nv, sv in product((nn - hn, nn + hn), (ss - hs, ss + hs))
        ]
        lows.append(min(max(min(corners), agg.lower), agg.upper))
        highs.append(max(min(max(corners), agg.upper), agg.lower))
    return value, np.column_stack([lows, highs]) if lows else np.zeros((0, 2))


def _var_from(n, s, qq, m, m2, cap):
    if n <= 1:
        mean, mean_sq = m, m2
    else:
        mean, mean_sq = s / n + m, qq / n + m2
    return min(max(mean_sq - mean * mean, 0.0), cap)


def _variance(agg, mech, data, i, accountant):
    mc, ms, mq = mech[Component.COUNT], mech[Component.SUM], mech[Component.SUMSQ]
    m, m2, _ = midpoints(agg)
    cap = (agg.upper - agg.lower) ** 2 / 4
    n = _noisy(data[f"n{i}"].tolist(), mc, accountant)
    s = _noisy(data[f"s{i}"].tolist(), ms, accountant) / 2.0**ms.exponent
    qq = _noisy(data[f"q{i}"].tolist(), mq, accountant) / 2.0**mq.exponent
    value = np.array([_var_from(a, b, c, m, m2, cap) for a, b, c in zip(n, s, qq, strict=True)])
    conf = 1 - (1 - CONFIDENCE) / 3
    hn, hs, hq = _half(mc, conf), _half(ms, conf), _half(mq, conf)
    lows, highs = [], []
    for nn, ss, q2 in zip(n, s, qq, strict=True):
        cands = [
            _var_from(a, b, c, m, m2, cap)
            for a, b, c in product((nn - hn, nn + hn), (ss - hs, ss + hs), (q2 - hq, q2 + hq))
        ]
        for a in (nn - hn, nn + hn):  # interior point where the mean is 0
            if a > 1 and ss - hs <= -m * a <= ss + hs:
                cands += [_var_from(a, -m * a, c, m, m2, cap) for c in (q2 - hq, q2 + hq)]
        lows.append(min(cands))
        highs.append(max(cands))
    if agg.kind == AggKind.STDDEV:
        value = np.sqrt(value)
        lows, highs = list(np.sqrt(lows)), list(np.sqrt(highs))
    return value, np.column_stack([lows, highs]) if lows else np.zeros((0, 2))


def half_widths(plan: StagedPlan) -> dict[int, float | None]:
    """Public 95% half-widths per aggregate (dry run): counts and sums only; None otherwise."""
    out: dict[int, float | None] = {}
    for m in plan.mechanisms:
        agg = plan.query.aggregates[m.aggregate]
        if agg.kind in (AggKind.COUNT_UNITS, AggKind.COUNT_ROWS, AggKind.COUNT_VALUES, AggKind.SUM):
            out[m.aggregate] = _half(m, CONFIDENCE)
        else:
            out.setdefault(m.aggregate, None)
    return out


def mechanism_rows(plan: StagedPlan) -> list[dict]:
    """The budget split as a table: one row per mechanism with Δ, scale and 95% half-width."""
    q = plan.query
    th = threshold_info(plan)
    rows = []
    for m in plan.mechanisms:
        agg = q.aggregates[m.aggregate]
        rows.append(
            {
                "aggregate": _name_of(q, m.aggregate),
                "label": m.mechanism.label,
                "kind": agg.kind,
                "component": m.component,
                "mechanism": m.mechanism.kind.value,
                "epsilon": float(m.epsilon),
                "delta": 0.0,
                "sensitivity": m.sensitivity / 2.0**m.exponent,
                "scale": m.scale / 2.0**m.exponent,
                "exponent_j": m.exponent,
                "half_width_95": _half(m, CONFIDENCE),
            }
        )
    tm = plan.threshold_mechanism
    if tm is None:
        return rows
    rows.append(
        {
            "aggregate": "partition selection (unit count)",
            "label": tm.mechanism.label,
            "kind": "THRESHOLD",
            "component": "units" if tm.aggregate is None else f"reuses {_name_of(q, tm.aggregate)}",
            "mechanism": tm.mechanism.kind.value,
            "epsilon": tm.mechanism.cost.epsilon,
            "delta": tm.mechanism.cost.delta,
            "sensitivity": 1.0,
            "scale": th.scale,
            "exponent_j": 0,
            "half_width_95": discrete_laplace_half_width(tm.mechanism.scale, CONFIDENCE),
        }
    )
    return rows


def _name_of(q, index: int | None) -> str:
    for o in q.outputs:
        if o.aggregate_index == index:
            return o.name
    return f"v{index}"


def finite_or_none(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)
