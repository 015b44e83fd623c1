"""The contract of one DP aggregate kind (SmartNoise's one class per mechanism is the model).

An `Aggregate` is one DP aggregate of a query, planned: it owns
- its mechanisms (`statistics`: each a `Statistic` holding the `core.privacy` object that will
  draw), planned from public parameters by `plan`;
- its SQL: the per-unit partials (`per_unit`, in the `per_user` stage), their clamped and
  integerised form (`clamped`) and the cross-unit statistics (`cross_unit`, in `cross_user`);
- its estimate: noisy value and noise-only interval per released partition (`estimate`);
- its accuracy from public parameters (`half_width`) and its BigQuery spelling.

The pipeline dispatches on the class (`core.dpsql.aggregates.kinds.KINDS`), never on a string.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from enum import Enum
from fractions import Fraction
from typing import ClassVar

import numpy as np
import pandas as pd
from sqlglot import exp

from core.dpsql.parse.ir import AggKind, DPAggregate, DPOptions, NoiseKind
from core.dpsql.plan.statistics import (
    Component,
    Statistic,
    gaussian_statistic,
    laplace_statistic,
)
from core.dpsql.sql.expressions import SqlTarget
from core.privacy import Accountant
from core.privacy.gaussian import sigma_for

CONFIDENCE = 0.95
SATURATE = 2**62
GROUP_BOUNDS = "contribution_bounds_per_group"
ROW_BOUNDS = "contribution_bounds_per_row"


class Argument(Enum):
    """What an aggregate's argument must be (checked against the catalogue schema)."""

    NONE = "no argument"  # COUNT(*), COUNT(DISTINCT uid)
    ANY = "a value of any type"  # COUNT(col): counts non-NULL values
    NUMBER = "a number"  # SUM, AVG, VAR, STDDEV, quantiles


class Aggregate(ABC):
    """One planned DP aggregate (index `index` of the query's aggregates)."""

    KIND: ClassVar[AggKind]
    ARGUMENT: ClassVar[Argument] = Argument.NUMBER
    ROW_LEVEL: ClassVar[bool] = False  # bounds per row: at most k rows per unit and partition
    # one count or sum that takes discrete Gaussian noise with `noise = 'gaussian'` (COUNT,
    # SUM, COUNT(DISTINCT uid)); the others keep their mechanisms
    GAUSSIAN: ClassVar[bool] = False
    # how a fix hint writes this aggregate in each form (x: the column)
    PAPER: ClassVar[str]
    ZETA: ClassVar[str]

    def __init__(self, index: int, spec: DPAggregate, name: str, statistics: tuple[Statistic, ...]):
        self.index = index
        self.spec = spec
        self.name = name
        self.statistics = statistics

    # -- planning --------------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def plan(
        cls, index: int, spec: DPAggregate, name: str, epsilon: Fraction, options: DPOptions
    ) -> Aggregate:
        """The aggregate with its statistics for an ε share `epsilon` (public only)."""

    @classmethod
    def _laplace(cls, index, spec, name, component, column, sens, j, eps, options) -> Statistic:
        label = f"{name}: {cls.KIND.value} {component.value}"
        cu = options.max_groups_contributed
        if cls.GAUSSIAN and options.noise is NoiseKind.GAUSSIAN:
            delta = options.gaussian_delta
            return gaussian_statistic(label, index, component, column, sens, j, eps, delta, cu)
        return laplace_statistic(label, index, component, column, sens, j, eps, cu)

    @classmethod
    def _grid_epsilon(cls, epsilon: Fraction, options: DPOptions) -> Fraction:
        """The ε per unit of noise that sets a sum's integer grid (`choose_exponent`): ε/C_u
        for Laplace (scale C_u·Δ/ε); with Gaussian noise at most 1/σ₁, σ₁ the Gaussian's σ
        for Δ = 1 (plus a margin), so that its σ stays below the integer-scale cap too."""
        grid = epsilon / options.max_groups_contributed
        if cls.GAUSSIAN and options.noise is NoiseKind.GAUSSIAN:
            cu = options.max_groups_contributed
            sigma_one = sigma_for(math.sqrt(cu), float(epsilon), options.gaussian_delta)
            grid = min(grid, Fraction(1.0 / (sigma_one * (1 + 1e-6))))
        return grid

    def statistic(self, component: Component) -> Statistic:
        return next(s for s in self.statistics if s.component == component)

    # -- SQL -------------------------------------------------------------------------------
    @abstractmethod
    def per_unit(self, arg: exp.Column | None, target: SqlTarget) -> list[exp.Expression]:
        """The per-(unit, partition) partials, aliased p<i>... (the `per_user` stage)."""

    @abstractmethod
    def clamped(self, target: SqlTarget) -> list[exp.Expression]:
        """The partials clamped to the bounds and integerised by 2^j (the `clamped` stage)."""

    @abstractmethod
    def cross_unit(self, target: SqlTarget) -> list[exp.Expression]:
        """The exact per-partition statistics over units (the `cross_user` stage)."""

    # -- release ---------------------------------------------------------------------------
    @abstractmethod
    def estimate(
        self, data: pd.DataFrame, accountant: Accountant, noisy_units: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(values, intervals) for the released partitions `data`; every draw goes through
        this aggregate's statistics. `noisy_units`: the unit counts partition selection
        already drew (only a reused COUNT(DISTINCT uid) uses them)."""

    def half_width(self, confidence: float = CONFIDENCE) -> float | None:
        """The public noise-only half-width of a released value (None: not one number)."""
        return None

    def release_note(self) -> str | None:
        """Something a release of this aggregate states besides its values (None: nothing)."""
        return None

    # -- export ----------------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def bigquery_call(cls, spec: DPAggregate, warnings: list[str]) -> exp.Expression:
        """This aggregate in BigQuery's SELECT WITH DIFFERENTIAL_PRIVACY syntax."""


# -- helpers shared by the kinds -----------------------------------------------------------------
def missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def exact_integers(values: list) -> np.ndarray:
    """Exact integers (NULL = 0) as int64, saturated at ±2^62 so that adding noise of scale
    below 2^26 never overflows (no accepted query sums that far: bounds keep each unit's
    integerised contribution below 2^31)."""
    return np.array(
        [0 if missing(v) else min(max(int(v), -SATURATE), SATURATE) for v in values],
        dtype=np.int64,
    )


def noisy(values: list, stat: Statistic, accountant: Accountant) -> np.ndarray:
    """Exact integers + the statistic's draw (discrete Laplace or Gaussian), as floats (integer
    units)."""
    return stat.mechanism.draw(accountant, exact_integers(values)).astype(float)


def bigquery_bounds(name: str, lo: float, hi: float) -> exp.Kwarg:
    return exp.Kwarg(
        this=exp.var(name),
        expression=exp.Tuple(expressions=[bigquery_number(lo), bigquery_number(hi)]),
    )


def bigquery_number(x: float) -> exp.Expression:
    value = int(x) if float(x).is_integer() else float(x)
    lit = exp.Literal.number(abs(value))
    return exp.Neg(this=lit) if value < 0 else lit


def argument_or_star(spec: DPAggregate) -> exp.Expression:
    return spec.arg.copy() if spec.arg is not None else exp.Star()
