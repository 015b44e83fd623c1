"""Plan the mechanisms of a DP query from public parameters only: the ε split, each
aggregate's integerisation exponent 2^j, per-partition sensitivity and noise scale (spec §2.5).

Privacy claim: every `Mechanism` here is the Laplace/discrete-Laplace mechanism of one
per-partition statistic with the stated sensitivity (for a unit contributing to at most C_u
partitions, clamped to [L, U], at most k rows for per-row aggregates) and its ε share; the
shares add up to the query's ε (`budget_split`). Nothing here reads data.
"""

from __future__ import annotations

import math
from fractions import Fraction

from core.dpsql.budget_split import split_epsilon
from core.dpsql.ir import DPAggregate, DPQuery
from core.dpsql.mechanisms import (
    Component,
    Statistic,
    laplace_statistic,
    quantile_statistic,
    threshold_statistic,
)
from core.dpsql.quantile import score_sensitivity
from core.dpsql.threshold import engine_threshold
from core.errors import InputError

MAX_EXPONENT = 24
# Integer partials stay below 2^31 per unit, so 2^31 units cannot overflow a 64-bit sum.
MAX_UNIT_CONTRIBUTION = 2**31
# Integer noise scales stay below 2^26: a larger scale drowns every result, and noisy
# integer sums stay far inside int64.
MAX_INT_SCALE = 2**26


def choose_exponent(bound: float, epsilon: Fraction, factor: int) -> int:
    """Largest j <= 24 with factor*|bound|*2^j <= 2^31 and its noise scale <= 2^26 (public only)."""
    if bound == 0:
        return MAX_EXPONENT
    j = MAX_EXPONENT
    while j > -60 and (
        factor * abs(bound) * 2.0**j > MAX_UNIT_CONTRIBUTION
        or factor * abs(bound) * 2.0**j / float(epsilon) > MAX_INT_SCALE
    ):
        j -= 1
    return j


def int_bound(value: float, exponent: int) -> int:
    """round(value * 2^j) as SQL's ROUND does it (half away from zero)."""
    scaled = value * 2.0**exponent
    return int(math.copysign(math.floor(abs(scaled) + 0.5), scaled))


def midpoints(agg: DPAggregate) -> tuple[float, float, float]:
    """m, m2 and R2 for bounded mean/variance (Google BoundedVariance)."""
    lo, hi = agg.lower, agg.upper
    m = (lo + hi) / 2
    if lo < 0 < hi:
        r2 = max(lo * lo, hi * hi)
        m2 = r2 / 2
    else:
        r2 = abs(hi * hi - lo * lo)
        m2 = (lo * lo + hi * hi) / 2
    return m, m2, r2


def aggregate_names(query: DPQuery) -> list[str]:
    """A readable, unique name per aggregate: its output alias when it is output bare."""
    names = []
    for i in range(len(query.aggregates)):
        name = next((o.name for o in query.outputs if o.aggregate_index == i), f"v{i}")
        names.append(name if name not in names else f"{name} #{i}")
    return names


def plan_mechanisms(
    query: DPQuery,
) -> tuple[list[Statistic], Statistic | None, Fraction | None]:
    """The statistics of `query` (each with its `core.privacy` mechanism) and the partition
    selection (None with PUBLIC_GROUPS).

    Privacy claim (unit = the catalogue's privacy unit): each statistic releases one
    per-partition value with noise calibrated to C_u·Δ, where Δ is the integerised
    per-partition sensitivity (|bound|·2^j for counts/sums, k·... for per-row aggregates) and
    ε_i its share of the query's ε; partition selection is a noisy threshold at (ε_τ, δ). By
    basic composition the query is (ε, δ)-DP (spec §2.5-§2.6)."""
    shares, reuse = split_epsilon(query)
    cu = query.options.max_groups_contributed
    k = query.options.max_rows_per_group
    names = aggregate_names(query)
    stats: list[Statistic] = []
    threshold_eps = None

    def laplace(i, component, column, sens, j, eps):
        a = query.aggregates[i]
        label = f"{names[i]}: {a.kind.value} {component.value}"
        stats.append(laplace_statistic(label, i, component, column, sens, j, eps, cu))

    for share in shares:
        i, eps = share.aggregate, share.epsilon
        if i is None:
            threshold_eps = eps
            continue
        a = query.aggregates[i]
        if a.kind == "COUNT_UNITS":
            laplace(i, Component.UNITS, "n_units", 1, 0, eps)
        elif a.kind in ("COUNT_ROWS", "COUNT_VALUES", "SUM"):
            bound = max(abs(a.lower), abs(a.upper))
            integral = float(a.lower).is_integer() and float(a.upper).is_integer()
            j = choose_exponent(bound, eps / cu, 1)
            if a.kind != "SUM" and integral:
                j = min(0, j)  # integer counts stay on the integer grid unless noise is huge
            sens = max(abs(int_bound(a.lower, j)), abs(int_bound(a.upper, j)))
            comp = Component.SUM if a.kind == "SUM" else Component.COUNT
            laplace(i, comp, f"s{i}", sens, j, eps)
        elif a.kind == "AVG":
            half = (a.upper - a.lower) / 2
            j = choose_exponent(half, eps / 2 / cu, 1)
            laplace(i, Component.COUNT, f"n{i}", 1, 0, eps / 2)
            laplace(i, Component.SUM, f"s{i}", int_bound(half, j), j, eps / 2)
        elif a.kind in ("VAR", "STDDEV"):
            m, m2, r2 = midpoints(a)
            half = (a.upper - a.lower) / 2
            j = choose_exponent(half, eps / 3 / cu, k)
            j2 = choose_exponent(r2 / 2, eps / 3 / cu, k)
            laplace(i, Component.COUNT, f"n{i}", k, 0, eps / 3)
            laplace(i, Component.SUM, f"s{i}", k * int_bound(half, j), j, eps / 3)
            laplace(i, Component.SUMSQ, f"q{i}", k * int_bound(r2 / 2, j2), j2, eps / 3)
        else:  # QUANTILE: up to k values per unit and partition change
            label = f"{names[i]}: QUANTILE({a.p:g}) quantile"
            sens = score_sensitivity(a.p, k)
            stats.append(quantile_statistic(label, i, eps, cu, k, sens))
    for s in stats:
        if s.component != Component.QUANTILE and s.scale > MAX_INT_SCALE:
            _too_small(query, s.scale)
    if query.options.public_groups:
        return stats, None, None
    reused = None if reuse is None else next(s for s in stats if s.aggregate == reuse)
    eps_tau = threshold_eps if reused is None else shares[reuse].epsilon
    if cu / eps_tau > MAX_INT_SCALE:
        _too_small(query, float(cu / eps_tau))
    delta = query.options.delta
    t = (
        engine_threshold(float(eps_tau), delta, cu)
        + (query.options.min_privacy_units_per_group or 1)
        - 1
    )
    label = "partition selection: unit count >= T"
    if reused is not None:
        label = f"partition selection: {reused.mechanism.label} >= T"
    return stats, threshold_statistic(label, eps_tau, delta, t, cu, reused), eps_tau


def _too_small(query: DPQuery, scale: float) -> None:
    raise InputError(
        f"DPX-V030 epsilon = {query.options.epsilon:g} is too small: a noise scale of "
        f"{scale:.3g} would drown every result. Fix: raise epsilon or use fewer aggregates."
    )
