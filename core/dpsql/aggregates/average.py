"""AVG with per-group bounds [L, U] (spec §2.7; Google BoundedMean): a noisy count of units'
non-NULL partials and a noisy sum of partials centred on the midpoint, half the ε share each;
the estimate is sum/count + midpoint, clamped to [L, U]."""

from __future__ import annotations

from fractions import Fraction
from itertools import product
from typing import ClassVar

import numpy as np
import pandas as pd
from sqlglot import exp

from core.dpsql.aggregates.base import (
    CONFIDENCE,
    GROUP_BOUNDS,
    Aggregate,
    argument_or_star,
    bigquery_bounds,
    noisy,
)
from core.dpsql.parse.ir import AggKind, DPAggregate, DPOptions
from core.dpsql.plan.integers import choose_exponent, int_bound
from core.dpsql.plan.statistics import Component
from core.dpsql.sql.expressions import SqlTarget, as_double, clamp, col, integerise, null_safe, num
from core.privacy import Accountant


class Average(Aggregate):
    """Privacy claim: the count (sensitivity 1 per partition) and the centred sum (sensitivity
    (U - L)/2 per partition, × 2^j) each get discrete Laplace at ε_i/2 with C_u in the scale;
    together ε_i."""

    KIND: ClassVar[AggKind] = AggKind.AVG
    PAPER = "ANON_AVG(x, 0, 100)"
    ZETA = "AVG(x, contribution_bounds_per_group => (0, 100))"

    @classmethod
    def plan(cls, index, spec, name, epsilon: Fraction, options: DPOptions) -> Average:
        cu = options.max_groups_contributed
        half = (spec.upper - spec.lower) / 2
        j = choose_exponent(half, epsilon / 2 / cu, 1)
        count = cls._laplace(
            index, spec, name, Component.COUNT, f"n{index}", 1, 0, epsilon / 2, options
        )
        total = cls._laplace(
            index,
            spec,
            name,
            Component.SUM,
            f"s{index}",
            int_bound(half, j),
            j,
            epsilon / 2,
            options,
        )
        return cls(index, spec, name, (count, total))

    @property
    def midpoint(self) -> float:
        return (self.spec.lower + self.spec.upper) / 2

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        value = target.double(arg) if target.executable else arg
        return [exp.alias_(exp.Avg(this=value), f"p{self.index}")]

    def clamped(self, target: SqlTarget) -> list[exp.Expression]:
        j = self.statistic(Component.SUM).exponent
        p = col(f"p{self.index}")
        centred = exp.Sub(
            this=clamp(as_double(p), self.spec.lower, self.spec.upper),
            expression=num(self.midpoint),
        )
        return [exp.alias_(null_safe(p, integerise(centred, j)), f"c{self.index}")]

    def cross_unit(self, target: SqlTarget) -> list[exp.Expression]:
        c = col(f"c{self.index}")
        return [
            exp.alias_(exp.Count(this=c), f"n{self.index}"),
            exp.alias_(target.total(c.copy()), f"s{self.index}"),
        ]

    def estimate(self, data: pd.DataFrame, accountant: Accountant, noisy_units):
        mc, ms = self.statistic(Component.COUNT), self.statistic(Component.SUM)
        lo, hi, mid = self.spec.lower, self.spec.upper, self.midpoint
        n = noisy(data[f"n{self.index}"].tolist(), mc, accountant)
        s = noisy(data[f"s{self.index}"].tolist(), ms, accountant) / 2.0**ms.exponent
        value = np.clip(s / np.maximum(1.0, n) + mid, lo, hi)
        conf = 1 - (1 - CONFIDENCE) / 2  # two statistics: Bonferroni
        hn, hs = mc.half_width(conf), ms.half_width(conf)
        lows, highs = [], []
        for nn, ss in zip(n, s, strict=True):
            corners = [
                sv / max(1.0, nv) + mid
                for nv, sv in product((nn - hn, nn + hn), (ss - hs, ss + hs))
            ]
            lows.append(min(max(min(corners), lo), hi))
            highs.append(max(min(max(corners), hi), lo))
        return value, np.column_stack([lows, highs]) if lows else np.zeros((0, 2))

    @classmethod
    def bigquery_call(cls, spec: DPAggregate, warnings: list[str]) -> exp.Expression:
        args = [argument_or_star(spec), bigquery_bounds(GROUP_BOUNDS, spec.lower, spec.upper)]
        return exp.Anonymous(this="AVG", expressions=args)
