"""Ranges of every DP SQL option and bound, in one place (spec §1.2; issue 9).

`check_ranges` runs after normalisation and before the rewrite, so it reads no data and
charges nothing. The normaliser already checks types and signs (V030-V033); this module adds
the floors and ceilings that keep every later computation finite and exact:

| value | accepted | why |
|---|---|---|
| epsilon | EPSILON_MIN <= ε < ∞ | below 1e-6 every noise scale exceeds the sampler's range anyway; huge ε is allowed (zero-noise checks) |
| delta | DELTA_MIN <= δ < 1, or 0 with PUBLIC_GROUPS | δ_adj = 1-(1-δ)^(1/C_u) must stay a normal double for every C_u <= MAX_GROUPS; 1e-250 / 1e6 = 1e-256 >> 2.2e-308. The floor is a numerical limit, not a privacy one: smaller δ only means a higher threshold |
| max_groups_contributed | 1 .. MAX_GROUPS | C_u multiplies every noise scale; beyond 1e6 no release survives |
| max_rows_per_group (k) | 1 .. MAX_ROWS_PER_GROUP | k values per unit per partition leave the database for quantiles; OpenDP takes k as u32 |
| quantile_grid_size | 2 .. MAX_QUANTILE_GRID | each partition's quantile scores every grid point (memory and time) |
| min_privacy_units_per_group | 1 .. MAX_MIN_UNITS | a pre-threshold above any realistic unit count is a typo |
| threshold_weight, weight | WEIGHT_MIN .. WEIGHT_MAX | the ratio of weights sets an ε share; extreme ratios underflow it |
| bounds L, U | \\|L\\|, \\|U\\| <= MAX_ABS_BOUND | squares (VAR) stay finite, and sums of clamped partials stay exact in HUGEINT |
"""

from __future__ import annotations

import math

from core.dpsql.parse.ir import AggKind, DPQuery
from core.errors import InputError
from core.privacy.cost import EPSILON_MIN as EPSILON_FLOOR

EPSILON_MIN = EPSILON_FLOOR  # the one floor every tool shares (core.privacy.cost)
DELTA_MIN = 1e-250
MAX_GROUPS = 1_000_000
MAX_ROWS_PER_GROUP = 10_000
MAX_QUANTILE_GRID = 10_001
MAX_MIN_UNITS = 1_000_000_000
WEIGHT_MIN, WEIGHT_MAX = 1e-6, 1e6
MAX_ABS_BOUND = 1e15
MAX_AGGREGATES = 64


def _refuse(code: str, what: str, fix: str) -> None:
    raise InputError(f"{code} {what} Fix: {fix}")


def _int_in(name: str, value, low: int, high: int, code: str = "DPX-V033") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        _refuse(
            code,
            f"{name} must be an integer in [{low:,}, {high:,}], but is {value}.",
            "use a value in that range (see the README option table).",
        )


def check_ranges(query: DPQuery) -> None:
    """Refuse any option or bound outside its documented range (before any data is read)."""
    o = query.options
    eps = o.epsilon
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps < EPSILON_MIN:
        _refuse(
            "DPX-V030",
            f"epsilon = {eps} is too small or not finite: the floor is {EPSILON_MIN:g} "
            "(below it every noise scale drowns the result).",
            "use e.g. epsilon = 1.",
        )
    delta = o.delta
    if not (isinstance(delta, (int, float)) and 0 <= delta < 1) or (
        delta < DELTA_MIN and not (o.public_groups and delta == 0)
    ):
        _refuse(
            "DPX-V031",
            f"delta must be in [{DELTA_MIN:g}, 1), but is {delta}.",
            "use e.g. delta = 1e-5 (0 only with PUBLIC_GROUPS).",
        )
    _int_in("max_groups_contributed", o.max_groups_contributed, 1, MAX_GROUPS, "DPX-V032")
    _int_in("max_rows_per_group", o.max_rows_per_group, 1, MAX_ROWS_PER_GROUP)
    _int_in("quantile_grid_size", o.quantile_grid_size, 2, MAX_QUANTILE_GRID)
    if o.min_privacy_units_per_group is not None:
        _int_in("min_privacy_units_per_group", o.min_privacy_units_per_group, 1, MAX_MIN_UNITS)
    _weight("threshold_weight", o.threshold_weight)
    if len(query.aggregates) > MAX_AGGREGATES:
        _refuse(
            "DPX-V033",
            f"the query has {len(query.aggregates)} DP aggregates; at most {MAX_AGGREGATES}.",
            "split it into several queries.",
        )
    for agg in query.aggregates:
        _weight(f"the weight of {agg.alias}", agg.weight)
        for name, bound in (("lower", agg.lower), ("upper", agg.upper)):
            if bound is None:
                continue
            if not math.isfinite(bound) or abs(bound) > MAX_ABS_BOUND:
                _refuse(
                    "DPX-V022",
                    f"the {name} bound of {agg.alias} is {bound:g}; bounds must be finite with "
                    f"|bound| <= {MAX_ABS_BOUND:g} so that clamped sums and squares stay exact.",
                    "rescale the column (e.g. thousands instead of units) or narrow the bounds.",
                )
        if agg.kind == AggKind.QUANTILE and (agg.p is None or not 0 <= agg.p <= 1):
            _refuse("DPX-V025", f"the quantile p of {agg.alias} is {agg.p}.", "use p in [0, 1].")


def _weight(name: str, w) -> None:
    if not isinstance(w, (int, float)) or not math.isfinite(w) or not WEIGHT_MIN <= w <= WEIGHT_MAX:
        _refuse(
            "DPX-V033",
            f"{name} must be in [{WEIGHT_MIN:g}, {WEIGHT_MAX:g}], but is {w}.",
            "use a weight near 1 (default).",
        )
