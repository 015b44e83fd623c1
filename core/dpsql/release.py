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
from core.dpsql.mechanisms import Component
from core.dpsql.quantile import private_quantile
from core.dpsql.rewrite import Mechanism, StagedPlan, midpoints
from core.dpsql.threshold import engine_threshold, opendp_threshold_delta, realised_delta, tau
from core.privacy import Noise, discrete_laplace_half_width

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
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
    from the threshold `Mechanism` itself (the object that draws the noise and is charged);
    T is the smallest integer with P(1 + Z >= T) <= δ_adj, so a partition that exists only
    because of one unit is released with probability <= δ over its C_u partitions."""
    tm = plan.threshold_mechanism
    if tm is None:
        return None
    delta = plan.query.options.delta
    eps_tau, cu = float(tm.epsilon), tm.max_groups
    assert tm.sensitivity == 1 and tm.exponent == 0, "the unit count has sensitivity 1"
    t = engine_threshold(eps_tau, delta, cu)
    own = realised_delta(t, eps_tau, cu)
    try:
        cross = opendp_threshold_delta(t, tm.scale, cu)
    except Exception:  # OpenDP rejects extreme parameters (e.g. T beyond i64); ours stands
        cross = 0.0
    return ThresholdInfo(tau(eps_tau, delta, cu), t, eps_tau, tm.scale, delta, max(own, cross))


@dataclass
class Released:
    """Released rows (k<i>, v<j> columns), their intervals, and what thresholding did."""

    table: pd.DataFrame
    intervals: dict[int, np.ndarray]  # aggregate index -> (rows, 2) [low, high]
    threshold: ThresholdInfo | None
    partitions_released: int
    notes: list[str] = field(default_factory=list)


def _noisy(values: list, m: Mechanism, noise: Noise) -> np.ndarray:
    """Exact integers + discrete Laplace, saturating at the int64 range (never an error)."""
    exact = np.array([0 if _missing(v) else int(v) for v in values], dtype=object)
    z = noise.discrete_laplace(m.scale, size=len(values)) if values else np.zeros(0, np.int64)
    out = exact + z.astype(object)
    return np.array([min(max(int(v), INT64_MIN), INT64_MAX) for v in out], dtype=float)


def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _half(m: Mechanism, confidence: float) -> float:
    if m.scale <= 0 or 2 * math.exp(-1.0 / m.scale) <= 1 - confidence:
        return 0.0  # P(Z != 0) is already below alpha (tiny scales)
    return discrete_laplace_half_width(m.scale, confidence) / 2.0**m.exponent


def release(plan: StagedPlan, cross_user: pd.DataFrame, noise: Noise) -> Released:
    """Noise, threshold and intervals for the exact per-partition table `cross_user`.

    Privacy claim (unit level, add/remove one unit with all its rows): every statistic gets
    noise from its own `Mechanism` (discrete Laplace, scale b = C_u·Δ/ε_i in integer units, or
    the exponential mechanism for quantiles at ε_i/C_u per partition); partitions pass only if
    their noisy unit count reaches T (`threshold_info`). Altogether (Σ ε_i + ε_τ, δ)-DP =
    (ε, δ)-DP, exactly what `mechanisms.charges(plan)` puts on the ledger.
    """
    q = plan.query
    th = threshold_info(plan)
    tm = plan.threshold_mechanism
    if tm is None:  # PUBLIC_GROUPS: every public key is released, empty ones as pure noise
        data = cross_user.copy()
        data["n_units"] = data["n_units"].fillna(0).astype("int64")
        noisy_units = None
    else:
        data = cross_user[cross_user["n_units"] > 0].reset_index(drop=True)
        units = data["n_units"].tolist()
        noisy_units = _noisy(units, tm, noise)
        m = q.options.min_privacy_units_per_group
        if m:  # Google's pre-threshold: exact count >= m and noisy count - (m - 1) >= T
            keep = (np.asarray(units) >= m) & (noisy_units - (m - 1) >= th.integer)
        else:
            keep = noisy_units >= th.integer
        data = data[keep].reset_index(drop=True)
        noisy_units = noisy_units[keep]
    rows = len(data)
    out = pd.DataFrame({f"k{i}": data[f"k{i}"] for i in range(len(q.keys))})
    intervals: dict[int, np.ndarray] = {}
    by_agg: dict[int, dict[str, Mechanism]] = {}
    for m in plan.mechanisms:
        by_agg.setdefault(m.aggregate, {})[m.component] = m
    for i, agg in enumerate(q.aggregates):
        mech = by_agg[i]
        if agg.kind == AggKind.COUNT_UNITS:
            value = (
                noisy_units
                if tm is not None and tm.aggregate == i
                else _noisy(data["n_units"].tolist(), mech[Component.UNITS], noise)
            )
            value = np.maximum(value, 0)
            h = _half(mech[Component.UNITS], CONFIDENCE)
            iv = np.column_stack([np.maximum(value - h, 0), value + h])
        elif agg.kind in (AggKind.COUNT_ROWS, AggKind.COUNT_VALUES, AggKind.SUM):
            m = mech[Component.COUNT if agg.kind != AggKind.SUM else Component.SUM]
            value = _noisy(data[f"s{i}"].tolist(), m, noise) / 2.0**m.exponent
            if agg.lower >= 0:
                value = np.maximum(value, 0)
            h = _half(m, CONFIDENCE)
            iv = np.column_stack([value - h, value + h])
            if agg.lower >= 0:
                iv[:, 0] = np.maximum(iv[:, 0], 0)
        elif agg.kind == AggKind.AVG:
            value, iv = _average(agg, mech, data, i, noise)
        elif agg.kind in (AggKind.VAR, AggKind.STDDEV):
            value, iv = _variance(agg, mech, data, i, noise)
        else:
            m = mech[Component.QUANTILE]
            eps_part = float(m.epsilon) / m.max_groups
            value = np.array(
                [
                    private_quantile(
                        vals if vals is not None else [],
                        agg.lower,
                        agg.upper,
                        agg.p,
                        eps_part,
                        q.options.max_rows_per_group,
                        q.options.quantile_grid_size,
                        noise,
                    )
                    for vals in data[f"l{i}"].tolist()
                ],
                dtype=float,
            )
            iv = np.full((rows, 2), np.nan)
        out[f"v{i}"] = np.asarray(value, dtype=float) if rows else np.zeros(0)
        intervals[i] = iv.reshape(rows, 2) if rows else np.zeros((0, 2))
    out[ROW_ID] = np.arange(rows)
    return Released(out, intervals, th, rows)


def _average(agg, mech, data, i, noise):
    mc, ms = mech[Component.COUNT], mech[Component.SUM]
    mid = (agg.lower + agg.upper) / 2
    n = _noisy(data[f"n{i}"].tolist(), mc, noise)
    s = _noisy(data[f"s{i}"].tolist(), ms, noise) / 2.0**ms.exponent
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


def _variance(agg, mech, data, i, noise):
    mc, ms, mq = mech[Component.COUNT], mech[Component.SUM], mech[Component.SUMSQ]
    m, m2, _ = midpoints(agg)
    cap = (agg.upper - agg.lower) ** 2 / 4
    n = _noisy(data[f"n{i}"].tolist(), mc, noise)
    s = _noisy(data[f"s{i}"].tolist(), ms, noise) / 2.0**ms.exponent
    qq = _noisy(data[f"q{i}"].tolist(), mq, noise) / 2.0**mq.exponent
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
                "kind": agg.kind,
                "component": m.component,
                "mechanism": m.kind,
                "epsilon": float(m.epsilon),
                "delta": 0.0,
                "sensitivity": m.sensitivity / 2.0**m.exponent,
                "scale": m.scale / 2.0**m.exponent,
                "exponent_j": m.exponent,
                "half_width_95": None
                if m.component == Component.QUANTILE
                else _half(m, CONFIDENCE),
            }
        )
    tm = plan.threshold_mechanism
    if tm is None:
        return rows
    rows.append(
        {
            "aggregate": "partition selection (unit count)",
            "kind": "THRESHOLD",
            "component": "units" if tm.aggregate is None else f"reuses {_name_of(q, tm.aggregate)}",
            "mechanism": "discrete Laplace + threshold",
            "epsilon": float(plan.threshold_epsilon) if tm.aggregate is None else 0.0,
            "delta": q.options.delta,
            "sensitivity": 1.0,
            "scale": th.scale,
            "exponent_j": 0,
            "half_width_95": _half(tm, CONFIDENCE),
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
