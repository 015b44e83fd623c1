"""The noisy statistics of a DP SQL query, each drawn by a `core.privacy` mechanism (spec §2.7).

A `Statistic` is one column of the per-partition table `cross_user` together with the
mechanism object that noises it: a `core.privacy.DiscreteLaplace` for counts and integerised
sums, a `core.privacy.Exponential` for quantiles, a `core.privacy.NoisyThreshold` for partition
selection. The mechanism states the cost, sensitivity and scale; the release draws through that
same object (`mechanism.draw(accountant, ...)`), and the query's cost is the composition of
these objects' costs. Nothing here reads data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from core.privacy import DiscreteGaussian, DiscreteLaplace, Exponential, Mechanism, NoisyThreshold

PROTECTS = "privacy unit"


class Component(StrEnum):
    """Which statistic of an aggregate a mechanism noises."""

    UNITS = "units"
    COUNT = "count"
    SUM = "sum"
    SUMSQ = "sumsq"
    QUANTILE = "quantile"
    BOUND = "bound"  # an implicit contribution bound chosen from the data (exponential mech.)


@dataclass(frozen=True)
class Statistic:
    """One per-partition statistic and the mechanism that noises it.

    Privacy claim: a unit changes at most C_u = `max_groups` partitions, each by at most
    `sensitivity` (integer units: values × 2^`exponent`), so the vector over all partitions
    has L1 sensitivity C_u·Δ; the mechanism is calibrated to exactly that (discrete Laplace of
    scale C_u·Δ/ε_i, or the exponential mechanism at ε_i/C_u per partition) and costs ε_i — or,
    with Gaussian noise, to its L2 sensitivity √C_u·Δ (discrete Gaussian at (ε_i, δ_i)).
    """

    aggregate: int | None  # index into query.aggregates; None for a threshold's own count
    component: Component
    column: str  # the cross_user column
    sensitivity: int  # per partition, in integer units (values × 2^exponent)
    exponent: int
    max_groups: int
    mechanism: Mechanism

    @property
    def epsilon(self) -> float:
        return self.mechanism.cost.epsilon

    @property
    def scale(self) -> float:
        """The mechanism's noise scale, in integer units."""
        return self.mechanism.scale

    @property
    def value_scale(self) -> float:
        """The noise scale in value units (÷ 2^exponent)."""
        return self.scale / 2.0**self.exponent

    def half_width(self, confidence: float) -> float | None:
        """Noise-only half-width in value units, from the mechanism's own quantiles (None: the
        exponential mechanism has none)."""
        if isinstance(self.mechanism, Exponential):
            return None
        return self.mechanism.half_width(confidence) / 2.0**self.exponent


def laplace_statistic(
    label: str,
    aggregate: int | None,
    component: Component,
    column: str,
    sensitivity: int,
    exponent: int,
    epsilon: float,
    max_groups: int,
) -> Statistic:
    """A count or integerised sum: discrete Laplace of sensitivity C_u·Δ at `epsilon`."""
    mech = DiscreteLaplace(label, sensitivity=max_groups * sensitivity, epsilon=float(epsilon))
    return Statistic(aggregate, component, column, sensitivity, exponent, max_groups, mech)


def gaussian_statistic(
    label: str,
    aggregate: int | None,
    component: Component,
    column: str,
    sensitivity: int,
    exponent: int,
    epsilon: float,
    delta: float,
    max_groups: int,
) -> Statistic:
    """A count or integerised sum with discrete Gaussian noise at (`epsilon`, `delta`).

    Sensitivity: contribution bounding leaves each unit in at most C_u partitions, moving each
    partition's statistic by at most Δ (= `sensitivity`, integer units), so adding or removing
    the unit moves the vector over partitions by at most √(C_u·Δ²) = √C_u·Δ in L2 norm (C_u·Δ
    in L1, what Laplace pays). Rounded up one float step so it is never understated."""
    l2 = math.nextafter(math.sqrt(max_groups * sensitivity * sensitivity), math.inf)
    mech = DiscreteGaussian(label, sensitivity=l2, epsilon=float(epsilon), delta=float(delta))
    return Statistic(aggregate, component, column, sensitivity, exponent, max_groups, mech)


def quantile_statistic(
    label: str, aggregate: int, epsilon: float, max_groups: int, rows: int, score_sensitivity: float
) -> Statistic:
    """A quantile per partition by the exponential mechanism. `score_sensitivity` is what one
    unit's <= k rows move a partition's score; over C_u partitions that is C_u times as much,
    so the one object drawn in every partition states sensitivity C_u·Δu at ε_i (its scale
    2·Δu/(ε_i/C_u) is each partition's)."""
    mech = Exponential(label, sensitivity=max_groups * score_sensitivity, epsilon=float(epsilon))
    return Statistic(aggregate, Component.QUANTILE, f"l{aggregate}", rows, 0, max_groups, mech)


def bound_statistic(
    label: str, aggregate: int, epsilon: float, max_groups: int, score_sensitivity: float
) -> Statistic:
    """An implicit contribution bound chosen by the exponential mechanism over public
    candidates; `score_sensitivity` is what one unit moves the score (C_u pairs included)."""
    mech = Exponential(label, sensitivity=score_sensitivity, epsilon=float(epsilon))
    return Statistic(aggregate, Component.BOUND, f"h{aggregate}", 0, 0, max_groups, mech)


def threshold_statistic(
    label: str,
    epsilon: float,
    delta: float,
    threshold: int,
    max_groups: int,
    reused: Statistic | None,
) -> Statistic:
    """Partition selection on the unit count (sensitivity 1 per partition, C_u in L1): its own
    discrete Laplace draw at `epsilon`, or — `reused` — the noisy COUNT(DISTINCT uid) of the
    query at no further ε."""
    if reused is None:
        mech = NoisyThreshold(
            label, sensitivity=max_groups, epsilon=float(epsilon), delta=delta, threshold=threshold
        )
        return Statistic(None, Component.UNITS, "n_units", 1, 0, max_groups, mech)
    mech = NoisyThreshold(
        label,
        sensitivity=max_groups,
        epsilon=0.0,
        delta=delta,
        threshold=threshold,
        reuses=reused.mechanism.label,
        noise_scale=reused.scale,
    )
    return Statistic(reused.aggregate, Component.UNITS, "n_units", 1, 0, max_groups, mech)
