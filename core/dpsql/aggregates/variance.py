"""VAR_POP and STDDEV_POP with per-row bounds [L, U] (spec §2.7; Google BoundedVariance): at
most k rows per unit and partition; a noisy count, a noisy sum of values centred on m and a
noisy sum of squares centred on m2, a third of the ε share each."""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import ClassVar

import numpy as np
import pandas as pd
from sqlglot import exp

from core.dpsql.aggregates.base import (
    CONFIDENCE,
    ROW_BOUNDS,
    Aggregate,
    argument_or_star,
    bigquery_bounds,
    noisy,
)
from core.dpsql.parse.ir import AggKind, DPAggregate, DPOptions
from core.dpsql.plan.integers import choose_exponent, int_bound, midpoints
from core.dpsql.plan.statistics import Component
from core.dpsql.sql.expressions import SqlTarget, clamp, col, integerise, num


class Variance(Aggregate):
    """Privacy claim: with at most k rows per unit and partition, each clamped to [L, U], the
    count moves by k, the centred sum by k·(U - L)/2 and the centred sum of squares by k·R2/2
    per partition (× their 2^j); each gets discrete Laplace at ε_i/3 with C_u in the scale."""

    KIND: ClassVar[AggKind] = AggKind.VAR
    ROW_LEVEL = True
    BIGQUERY_NAME: ClassVar[str] = "VAR_POP"
    PAPER = "ANON_VAR(x, 0, 100)"
    ZETA = "VAR_POP(x, contribution_bounds_per_row => (0, 100))"

    @classmethod
    def plan(cls, index, spec, name, epsilon: Fraction, options: DPOptions) -> Variance:
        cu, k = options.max_groups_contributed, options.max_rows_per_group
        _, _, r2 = midpoints(spec)
        half = (spec.upper - spec.lower) / 2
        third = epsilon / 3
        j = choose_exponent(half, third / cu, k)
        j2 = choose_exponent(r2 / 2, third / cu, k)
        stats = (
            cls._laplace(index, spec, name, Component.COUNT, f"n{index}", k, 0, third, options),
            cls._laplace(
                index,
                spec,
                name,
                Component.SUM,
                f"s{index}",
                k * int_bound(half, j),
                j,
                third,
                options,
            ),
            cls._laplace(
                index,
                spec,
                name,
                Component.SUMSQ,
                f"q{index}",
                k * int_bound(r2 / 2, j2),
                j2,
                third,
                options,
            ),
        )
        return cls(index, spec, name, stats)

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        # rows are ranked within (unit, keys, value IS NULL): keep <= k non-NULL rows
        keep = exp.and_(
            exp.LTE(this=col(f"rn_{arg.name}"), expression=num(target.rows_per_unit)),
            exp.Not(this=exp.Is(this=arg.copy(), expression=exp.Null())),
        )
        row = clamp(target.double(arg), self.spec.lower, self.spec.upper)
        m, m2, _ = midpoints(self.spec)
        js = self.statistic(Component.SUM).exponent
        jq = self.statistic(Component.SUMSQ).exponent
        centred = integerise(exp.Sub(this=row, expression=num(m)), js)
        square = integerise(
            exp.Sub(this=exp.Mul(this=row.copy(), expression=row.copy()), expression=num(m2)), jq
        )
        return [
            exp.alias_(
                exp.Filter(this=body, expression=exp.Where(this=keep.copy())),
                f"p{self.index}{suffix}",
            )
            for suffix, body in (
                ("n", exp.Count(this=arg.copy())),
                ("s", exp.Sum(this=centred)),
                ("q", exp.Sum(this=square)),
            )
        ]

    def clamped(self, target: SqlTarget) -> list[exp.Expression]:
        return [col(f"p{self.index}{s}") for s in "nsq"]

    def cross_unit(self, target: SqlTarget) -> list[exp.Expression]:
        i = self.index
        return [
            exp.alias_(target.total(col(f"p{i}n")), f"n{i}"),
            exp.alias_(target.total(col(f"p{i}s")), f"s{i}"),
            exp.alias_(target.total(col(f"p{i}q")), f"q{i}"),
        ]

    def estimate(self, data: pd.DataFrame, accountant, noisy_units):
        mc, ms, mq = (self.statistic(c) for c in (Component.COUNT, Component.SUM, Component.SUMSQ))
        m, m2, _ = midpoints(self.spec)
        cap = (self.spec.upper - self.spec.lower) ** 2 / 4
        i = self.index
        n = noisy(data[f"n{i}"].tolist(), mc, accountant)
        s = noisy(data[f"s{i}"].tolist(), ms, accountant) / 2.0**ms.exponent
        qq = noisy(data[f"q{i}"].tolist(), mq, accountant) / 2.0**mq.exponent
        value = np.array([_var_from(a, b, c, m, m2, cap) for a, b, c in zip(n, s, qq, strict=True)])
        conf = 1 - (1 - CONFIDENCE) / 3  # three statistics: Bonferroni
        hn, hs, hq = mc.half_width(conf), ms.half_width(conf), mq.half_width(conf)
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
        return self.finish(value, lows, highs)

    def finish(self, value, lows, highs):
        return value, np.column_stack([lows, highs]) if lows else np.zeros((0, 2))

    @classmethod
    def bigquery_call(cls, spec: DPAggregate, warnings: list[str]) -> exp.Expression:
        warnings.append(
            f"{cls.BIGQUERY_NAME} exists in ZetaSQL but BigQuery documents only AVG, COUNT, "
            "PERCENTILE_CONT and SUM."
        )
        args = [argument_or_star(spec), bigquery_bounds(ROW_BOUNDS, spec.lower, spec.upper)]
        return exp.Anonymous(this=cls.BIGQUERY_NAME, expressions=args)


class StdDev(Variance):
    """STDDEV_POP: the square root of the variance estimate and of its interval's ends."""

    KIND: ClassVar[AggKind] = AggKind.STDDEV
    BIGQUERY_NAME = "STDDEV_POP"
    PAPER = "ANON_STDDEV(x, 0, 100)"
    ZETA = "STDDEV_POP(x, contribution_bounds_per_row => (0, 100))"

    def finish(self, value, lows, highs):
        return super().finish(np.sqrt(value), list(np.sqrt(lows)), list(np.sqrt(highs)))


def _var_from(n, s, qq, m, m2, cap):
    if n <= 1:
        mean, mean_sq = m, m2
    else:
        mean, mean_sq = s / n + m, qq / n + m2
    return min(max(mean_sq - mean * mean, 0.0), cap)
