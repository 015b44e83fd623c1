"""Counts and sums: one noisy integer statistic each (spec §2.5, §2.7).

COUNT(DISTINCT uid) counts units (sensitivity 1 per partition); bounded COUNT(*), COUNT(col)
and SUM(col) sum each unit's clamped per-partition partial over units (sensitivity
max(|L|, |U|) per partition, in integer units × 2^j).
"""

from __future__ import annotations

from fractions import Fraction
from typing import ClassVar

import numpy as np
import pandas as pd
from sqlglot import exp

from core.dpsql.aggregates.base import (
    CONFIDENCE,
    GROUP_BOUNDS,
    Aggregate,
    Argument,
    argument_or_star,
    bigquery_bounds,
    noisy,
)
from core.dpsql.parse.ir import AggKind, DPAggregate, DPOptions
from core.dpsql.plan.integers import choose_exponent, int_bound
from core.dpsql.plan.statistics import Component
from core.dpsql.sql.expressions import SqlTarget, as_double, clamp, col, integerise, null_safe
from core.privacy import Accountant


class CountUnits(Aggregate):
    """COUNT(DISTINCT uid): the number of units per partition, discrete Laplace of scale
    C_u/ε_i (one unit changes it by 1 in at most C_u partitions). When the query has one, it
    also decides partition selection (the threshold reuses its noisy value)."""

    KIND: ClassVar[AggKind] = AggKind.COUNT_UNITS
    ARGUMENT = Argument.NONE
    GAUSSIAN = True
    PAPER = "ANON_COUNT(DISTINCT uid)"
    ZETA = "COUNT(DISTINCT uid)"

    @classmethod
    def plan(cls, index, spec, name, epsilon: Fraction, options: DPOptions) -> CountUnits:
        units = cls._laplace(index, spec, name, Component.UNITS, "n_units", 1, 0, epsilon, options)
        return cls(index, spec, name, (units,))

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        return []  # cross_user always counts the (unit, partition) rows as n_units

    def clamped(self, target: SqlTarget) -> list[exp.Expression]:
        return []

    def cross_unit(self, target: SqlTarget) -> list[exp.Expression]:
        return []

    def estimate(self, data: pd.DataFrame, accountant: Accountant, noisy_units):
        stat = self.statistic(Component.UNITS)
        value = (
            noisy_units
            if noisy_units is not None
            else noisy(data["n_units"].tolist(), stat, accountant)
        )
        value = np.maximum(value, 0)
        h = self.half_width()
        return value, np.column_stack([np.maximum(value - h, 0), value + h])

    def half_width(self, confidence: float = CONFIDENCE) -> float:
        return self.statistic(Component.UNITS).half_width(confidence)

    @classmethod
    def bigquery_call(cls, spec: DPAggregate, warnings: list[str]) -> exp.Expression:
        return exp.Anonymous(
            this="COUNT", expressions=[exp.Star(), bigquery_bounds(GROUP_BOUNDS, 0, 1)]
        )


class ClampedTotal(Aggregate):
    """Sum over units of each unit's per-partition partial clamped to [L, U] (integerised)."""

    COMPONENT: ClassVar[Component]
    BIGQUERY_NAME: ClassVar[str]
    GAUSSIAN = True

    @classmethod
    def plan(cls, index, spec, name, epsilon: Fraction, options: DPOptions) -> ClampedTotal:
        bound = max(abs(spec.lower), abs(spec.upper))
        j = cls.exponent(bound, spec, cls._grid_epsilon(epsilon, options))
        sens = max(abs(int_bound(spec.lower, j)), abs(int_bound(spec.upper, j)))
        stat = cls._laplace(
            index, spec, name, cls.COMPONENT, f"s{index}", sens, j, epsilon, options
        )
        return cls(index, spec, name, (stat,))

    @classmethod
    def exponent(cls, bound: float, spec: DPAggregate, epsilon: Fraction) -> int:
        return choose_exponent(bound, epsilon, 1)

    def cross_unit(self, target: SqlTarget) -> list[exp.Expression]:
        return [exp.alias_(target.total(col(f"c{self.index}")), f"s{self.index}")]

    def estimate(self, data: pd.DataFrame, accountant: Accountant, noisy_units):
        stat = self.statistic(self.COMPONENT)
        value = noisy(data[f"s{self.index}"].tolist(), stat, accountant) / 2.0**stat.exponent
        nonnegative = self.spec.lower >= 0
        if nonnegative:
            value = np.maximum(value, 0)
        h = self.half_width()
        iv = np.column_stack([value - h, value + h])
        if nonnegative:
            iv[:, 0] = np.maximum(iv[:, 0], 0)
        return value, iv

    def half_width(self, confidence: float = CONFIDENCE) -> float:
        return self.statistic(self.COMPONENT).half_width(confidence)

    @classmethod
    def bigquery_call(cls, spec: DPAggregate, warnings: list[str]) -> exp.Expression:
        args = [argument_or_star(spec), bigquery_bounds(GROUP_BOUNDS, spec.lower, spec.upper)]
        return exp.Anonymous(this=cls.BIGQUERY_NAME, expressions=args)


class BoundedCount(ClampedTotal):
    """COUNT per unit and partition, clamped to [L, U] (0 <= L): integer counts stay on the
    integer grid (2^0) unless the noise is so large that a coarser grid is needed."""

    COMPONENT = Component.COUNT
    BIGQUERY_NAME = "COUNT"

    @classmethod
    def exponent(cls, bound: float, spec: DPAggregate, epsilon: Fraction) -> int:
        j = choose_exponent(bound, epsilon, 1)
        integral = float(spec.lower).is_integer() and float(spec.upper).is_integer()
        return min(0, j) if integral else j

    def clamped(self, target: SqlTarget) -> list[exp.Expression]:
        j = self.statistic(Component.COUNT).exponent
        value = clamp(col(f"p{self.index}"), self.spec.lower, self.spec.upper)
        return [exp.alias_(integerise(value, j) if j else value, f"c{self.index}")]


class CountRows(BoundedCount):
    """COUNT(*) with contribution bounds per group."""

    KIND: ClassVar[AggKind] = AggKind.COUNT_ROWS
    ARGUMENT = Argument.NONE
    PAPER = "ANON_COUNT(*, 5)"
    ZETA = "COUNT(*, contribution_bounds_per_group => (0, 5))"

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        return [exp.alias_(exp.Count(this=exp.Star()), f"p{self.index}")]


class CountValues(BoundedCount):
    """COUNT(col): the non-NULL values of col, with contribution bounds per group."""

    KIND: ClassVar[AggKind] = AggKind.COUNT_VALUES
    ARGUMENT = Argument.ANY
    PAPER = "ANON_COUNT(x, 5)"
    ZETA = "COUNT(x, contribution_bounds_per_group => (0, 5))"

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        return [exp.alias_(exp.Count(this=arg), f"p{self.index}")]


class Sum(ClampedTotal):
    """SUM(col): each unit's per-partition sum clamped to [L, U] (NULL stays NULL)."""

    KIND: ClassVar[AggKind] = AggKind.SUM
    COMPONENT = Component.SUM
    BIGQUERY_NAME = "SUM"
    PAPER = "ANON_SUM(x, 0, 100)"
    ZETA = "SUM(x, contribution_bounds_per_group => (0, 100))"

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        value = target.double(arg) if target.executable else arg
        return [exp.alias_(exp.Sum(this=value), f"p{self.index}")]

    def clamped(self, target: SqlTarget) -> list[exp.Expression]:
        j = self.statistic(Component.SUM).exponent
        p = col(f"p{self.index}")
        value = integerise(clamp(as_double(p), self.spec.lower, self.spec.upper), j)
        return [exp.alias_(null_safe(p, value), f"c{self.index}")]
