"""Exponential-mechanism quantiles on a public grid (spec §2.7; Smith 2011).

Score of candidate c: |(1 - p)·#{x < c} - p·#{x > c}|, lower is better; one unit adds or
removes up to k values, so the score moves by at most k·max(p, 1 - p). Secure mode runs OpenDP's
`make_private_quantile` (the same score) at the scale the mechanism object states; seeded mode
samples the same distribution with Gumbel-max from `Noise.uniform`, for reproducible demos.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import ClassVar

import numpy as np
import pandas as pd
from sqlglot import exp

from core.dpsql.aggregates.base import (
    ROW_BOUNDS,
    Aggregate,
    argument_or_star,
    bigquery_bounds,
    bigquery_number,
)
from core.dpsql.parse.ir import AggKind, DPAggregate, DPOptions
from core.dpsql.plan.statistics import quantile_statistic
from core.dpsql.sql.expressions import SqlTarget, clamp, col, num
from core.dpsql.sql.postgres import flatten_lists
from core.privacy import Accountant, Exponential, Overdraw


def grid(lower: float, upper: float, size: int) -> np.ndarray:
    return np.linspace(lower, upper, size) if upper > lower else np.array([float(lower)])


def scores(values: np.ndarray, candidates: np.ndarray, p: float) -> np.ndarray:
    v = np.sort(np.asarray(values, dtype=float))
    below = np.searchsorted(v, candidates, side="left")
    above = v.size - np.searchsorted(v, candidates, side="right")
    return np.abs((1 - p) * below - p * above)


@lru_cache(maxsize=256)
def score_sensitivity(p: float, max_values: int) -> float:
    """What one unit's <= k values move a partition's score: k·max(p, 1 - p), raised to what
    OpenDP's own accounting needs (it represents p as a fraction; for p = 1/3 its privacy map
    charges 1.00005 ε at the textbook scale). Public: depends on (p, k) only."""
    base = max_values * max(p, 1 - p)
    if base == 0:
        return 0.0
    charged = _opendp_measure((0.0, 1.0), float(p), 2.0 * base).map(max_values)  # at ε = 1
    return base * max(1.0, float(charged))


@lru_cache(maxsize=64)  # bounded: grids of up to 10,001 points per entry
def _opendp_measure(candidates: tuple, p: float, scale: float):
    from core.privacy.noise import _opendp

    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    return dp.m.make_private_quantile(
        domain, dp.symmetric_distance(), dp.max_divergence(), list(candidates), p, scale
    )


def private_quantiles(
    mechanism: Exponential,
    accountant: Accountant,
    partitions: list,
    lower: float,
    upper: float,
    p: float,
    max_values: int,
    grid_size: int,
) -> np.ndarray:
    """One DP quantile of clamped values per partition; always a grid point.

    Privacy claim: the exponential mechanism over the public grid with the score of the module
    docstring, at the scale `mechanism` states (2·Δu/(ε_i/C_u) per partition, Δu =
    `score_sensitivity(p, k)`); the partitions are disjoint, so the one object drawn in each
    costs ε_i once. Secure mode draws with OpenDP's `make_private_quantile` at that same scale
    (its privacy map must agree), seeded mode by Gumbel-max from `Noise.uniform`."""
    candidates = grid(lower, upper, grid_size)
    out = np.empty(len(partitions), dtype=float)
    with accountant.drawing(mechanism) as noise:  # recorded even when no partition survives
        secure = noise.is_secure
    if secure:
        meas = _opendp_measure(tuple(float(c) for c in candidates), float(p), mechanism.scale)
        per_partition = 2.0 * score_sensitivity(p, max_values) / mechanism.scale  # ε_i / C_u
        if meas.map(max_values) > per_partition * (1 + 1e-9):  # OpenDP's accounting must agree
            raise Overdraw(f"{mechanism.label}: OpenDP charges more than the stated scale allows")
    for r, vals in enumerate(partitions):
        values = np.clip(np.asarray(vals if vals is not None else [], dtype=float), lower, upper)
        if secure:
            with accountant.drawing(mechanism):
                out[r] = float(meas([float(x) for x in values]))
        else:
            out[r] = candidates[mechanism.draw(accountant, -scores(values, candidates, p))]
    return out


class Quantile(Aggregate):
    """PERCENTILE_CONT / ANON_NTILE / MIN / MAX / MEDIAN: per partition, the exponential
    mechanism over a public grid of `quantile_grid_size` points in [L, U] on the (at most k
    per unit) clamped values. Privacy claim: ε_i/C_u per partition, ε_i over a unit's C_u
    partitions (`private_quantiles`)."""

    KIND: ClassVar[AggKind] = AggKind.QUANTILE
    ROW_LEVEL = True
    PAPER = "ANON_MEDIAN(x, 0, 100)"
    ZETA = "PERCENTILE_CONT(x, 0.5, contribution_bounds_per_row => (0, 100))"

    def __init__(self, index, spec, name, statistics, grid_size: int, rows: int):
        super().__init__(index, spec, name, statistics)
        self.grid_size = grid_size
        self.rows = rows

    @classmethod
    def plan(cls, index, spec, name, epsilon: Fraction, options: DPOptions) -> Quantile:
        k = options.max_rows_per_group
        label = f"{name}: QUANTILE({spec.p:g}) quantile"
        stat = quantile_statistic(
            label, index, epsilon, options.max_groups_contributed, k, score_sensitivity(spec.p, k)
        )
        return cls(index, spec, name, (stat,), options.quantile_grid_size, k)

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        # rows are ranked within (unit, keys, value IS NULL): keep <= k non-NULL rows
        keep = exp.and_(
            exp.LTE(this=col(f"rn_{arg.name}"), expression=num(target.rows_per_unit)),
            exp.Not(this=exp.Is(this=arg.copy(), expression=exp.Null())),
        )
        row = clamp(target.double(arg), self.spec.lower, self.spec.upper)
        agg = exp.ArrayAgg(this=row) if target.wide else exp.List(expressions=[row])
        if target.dialect == "bigquery":  # BigQuery's ARRAY_AGG rejects NULL elements
            agg = exp.IgnoreNulls(this=agg)
        return [exp.alias_(exp.Filter(this=agg, expression=exp.Where(this=keep)), f"p{self.index}")]

    def clamped(self, target: SqlTarget) -> list[exp.Expression]:
        return [col(f"p{self.index}")]

    def cross_unit(self, target: SqlTarget) -> list[exp.Expression]:
        p, name = col(f"p{self.index}"), f"l{self.index}"
        if target.dialect == "bigquery":  # no nested arrays in BigQuery: concatenate instead
            return [exp.alias_(exp.ArrayConcatAgg(this=p), name)]
        if target.dialect == "postgres":  # no FLATTEN, no ragged ARRAY_AGG: see postgres.py
            return [exp.alias_(flatten_lists(p), name)]
        gathered = exp.ArrayAgg(this=p) if target.wide else exp.List(expressions=[p])
        return [exp.alias_(exp.Flatten(this=gathered), name)]

    def estimate(self, data: pd.DataFrame, accountant: Accountant, noisy_units):
        value = private_quantiles(
            self.statistics[0].mechanism,
            accountant,
            data[f"l{self.index}"].tolist(),
            self.spec.lower,
            self.spec.upper,
            self.spec.p,
            self.rows,
            self.grid_size,
        )
        return value, np.full((len(data), 2), np.nan)

    @classmethod
    def bigquery_call(cls, spec: DPAggregate, warnings: list[str]) -> exp.Expression:
        args = [
            argument_or_star(spec),
            bigquery_number(spec.p),
            bigquery_bounds(ROW_BOUNDS, spec.lower, spec.upper),
        ]
        return exp.Anonymous(this="PERCENTILE_CONT", expressions=args)
