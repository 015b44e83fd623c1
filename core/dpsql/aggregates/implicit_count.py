"""COUNT(*) and COUNT(x) without contribution bounds: bounds inferred privately from the data.

ZetaSQL and BigQuery take COUNT's `contribution_bounds_per_group` optionally. Their reference
says: "If you don't include the contribution bounds named argument with the
DIFFERENTIAL_PRIVACY clause, clamping is implicit, which means bounds are derived from the data
itself in a differentially private way", and "When clamping is implicit, part of the total
epsilon is spent picking bounds" (google/zetasql docs/aggregate-dp-functions.md, "Implicit
clamping"; BigQuery "Differentially private aggregate functions", "Implicitly clamp values").
The same holds for the paper form's ANON_COUNT(x) without CLAMPED BETWEEN.

How this engine does it (its own design, within that documented contract), for one
aggregate's ε share ε_i, half each:
1. the upper bound U = 2^c of one unit's count in one partition is chosen among the public
   candidates 2^0 .. 2^K by the exponential mechanism, scoring c by how close the share of
   (unit, partition) pairs with a count <= 2^c is to `BOUND_QUANTILE` (the quantile score of
   `core.dpsql.aggregates.quantile`; one unit moves at most C_u pairs, so the score moves by at
   most C_u·max(q, 1 - q)), minus a public penalty of one noise scale per doubling (above the
   quantile the score is flat, and the smallest such bound adds the least noise);
2. the count is released normalised by U: Σ over units of min(count, U) · 2^(j - c), an
   integer in [0, 2^j] per unit and partition whatever U is, with discrete Laplace of
   sensitivity C_u·2^j at ε_i/2 — one mechanism object fixed before any data is read. The
   released count is that value × 2^(c - j); its noise scale in counts is C_u·U/(ε_i/2).
The exact sums for every candidate are computed in the same SQL pass (the cross-user stage),
so the choice of U costs no second read of the data.
"""

from __future__ import annotations

from fractions import Fraction
from typing import ClassVar

import numpy as np
import pandas as pd
from sqlglot import exp

from core.dpsql.aggregates.base import (
    CONFIDENCE,
    Aggregate,
    Argument,
    argument_or_star,
    exact_integers,
    noisy,
)
from core.dpsql.parse.ir import AggKind, DPAggregate, DPOptions
from core.dpsql.plan.integers import choose_exponent
from core.dpsql.plan.statistics import Component, bound_statistic
from core.dpsql.sql.expressions import SqlTarget, col, num
from core.privacy import Accountant

MAX_BOUND_EXPONENT = 20  # candidate bounds 1, 2, 4, ..., 2^20 rows per unit and partition
BOUND_QUANTILE = 0.99  # the chosen U covers about this share of (unit, partition) counts


class ImplicitCountRows(Aggregate):
    """COUNT(*) without bounds (see the module docstring for the mechanisms and the claim)."""

    KIND: ClassVar[AggKind] = AggKind.IMPLICIT_COUNT_ROWS
    ARGUMENT = Argument.NONE
    PAPER = "ANON_COUNT(*)"
    ZETA = "COUNT(*)"

    def __init__(self, index, spec, name, statistics, exponent: int):
        super().__init__(index, spec, name, statistics)
        self.exponent = exponent  # j: the normalised count's integer grid
        self.candidates = min(MAX_BOUND_EXPONENT, exponent)  # K: bounds 2^0 .. 2^K

    @classmethod
    def plan(cls, index, spec, name, epsilon: Fraction, options: DPOptions) -> ImplicitCountRows:
        cu = options.max_groups_contributed
        half = epsilon / 2
        j = max(0, choose_exponent(1, half / cu, 1))
        count = cls._laplace(
            index, spec, name, Component.COUNT, f"s{index}_{min(MAX_BOUND_EXPONENT, j)}",
            2**j, j, half, options,
        )  # fmt: skip
        score = cu * max(BOUND_QUANTILE, 1 - BOUND_QUANTILE)
        bound = bound_statistic(f"{name}: {cls.KIND.value} bound", index, half, cu, score)
        return cls(index, spec, name, (bound, count), j)

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        return [exp.alias_(exp.Count(this=exp.Star()), f"p{self.index}")]

    def clamped(self, target: SqlTarget) -> list[exp.Expression]:
        return [exp.alias_(col(f"p{self.index}"), f"c{self.index}")]

    def cross_unit(self, target: SqlTarget) -> list[exp.Expression]:
        """Per candidate c: Σ min(count, 2^c)·2^(j-c) (the normalised count) and the number of
        units whose count is <= 2^c (the score of the bound)."""
        c_col, i, out = col(f"c{self.index}"), self.index, []
        for c in range(self.candidates + 1):
            capped = exp.Least(this=c_col.copy(), expressions=[num(2**c)], ignore_nulls=True)
            scaled = exp.Mul(this=capped, expression=num(2 ** (self.exponent - c)))
            out.append(exp.alias_(target.total(scaled), f"s{i}_{c}"))
            within = exp.Case(
                ifs=[exp.If(this=exp.LTE(this=c_col.copy(), expression=num(2**c)), true=num(1))],
                default=num(0),
            )
            out.append(exp.alias_(target.total(within), f"h{i}_{c}"))
        return out

    def estimate(self, data: pd.DataFrame, accountant: Accountant, noisy_units):
        """Choose U on the released partitions, then release the normalised count."""
        bound, count = self.statistics
        pairs = exact_integers(data["n_units"].tolist()).sum() if len(data) else 0
        within = np.array(
            [exact_integers(data[f"h{self.index}_{c}"].tolist()).sum() if len(data) else 0
             for c in range(self.candidates + 1)],
            dtype=float,
        )  # fmt: skip
        q = BOUND_QUANTILE
        steps = np.arange(self.candidates + 1)
        # the quantile score, minus one noise scale per doubling of U: a public penalty that
        # prefers the smallest bound among those the data scores alike (above the quantile
        # the score is flat), so each step up is e times less likely
        utilities = -np.abs((1 - q) * within - q * (pairs - within)) - bound.scale * steps
        c = int(bound.mechanism.draw(accountant, utilities))
        factor = 2.0 ** (c - self.exponent)
        value = noisy(data[f"s{self.index}_{c}"].tolist(), count, accountant) * factor
        value = np.maximum(value, 0)
        h = count.mechanism.half_width(CONFIDENCE) * factor
        self.chosen_bound = 2**c  # public: a DP output, reported with the release
        return value, np.column_stack([np.maximum(value - h, 0), value + h])

    def release_note(self) -> str | None:
        bound = getattr(self, "chosen_bound", None)
        if bound is None:
            return None
        return (
            f"{self.name}: contribution bound per unit and group chosen privately, U = {bound} "
            "(implicit clamping, as ZetaSQL/BigQuery do without explicit bounds)"
        )

    @classmethod
    def bigquery_call(cls, spec: DPAggregate, warnings: list[str]) -> exp.Expression:
        return exp.Anonymous(this="COUNT", expressions=[argument_or_star(spec)])


class ImplicitCountValues(ImplicitCountRows):
    """COUNT(x) without bounds: the non-NULL values of x, bounds inferred as for COUNT(*)."""

    KIND: ClassVar[AggKind] = AggKind.IMPLICIT_COUNT_VALUES
    ARGUMENT = Argument.ANY
    PAPER = "ANON_COUNT(x)"
    ZETA = "COUNT(x)"

    def per_unit(self, arg, target: SqlTarget) -> list[exp.Expression]:
        return [exp.alias_(exp.Count(this=arg), f"p{self.index}")]
