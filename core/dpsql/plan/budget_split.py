"""How a query's epsilon is split over its mechanisms (spec §2.10, ZetaSQL convention).

n DP aggregates plus the implicit unit count share epsilon by weight (default: eps/(n+1) each);
a COUNT(DISTINCT uid) in the query doubles as the threshold statistic (eps/n). AVG halves its
share over (count, normalised sum), VAR/STDDEV thirds it over (count, sum, sum of squares).
Delta goes entirely to thresholding.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from core.dpsql.parse.ir import AggKind, DPQuery


@dataclass(frozen=True)
class Share:
    """The epsilon of one aggregate (index into query.aggregates) or of the threshold (None)."""

    aggregate: int | None
    epsilon: Fraction


def split_epsilon(query: DPQuery) -> tuple[list[Share], int | None]:
    """Per-aggregate shares and the index of the aggregate reused as threshold statistic."""
    eps = Fraction(query.options.epsilon)
    weights = [Fraction(a.weight) for a in query.aggregates]
    reuse = next((i for i, a in enumerate(query.aggregates) if a.kind == AggKind.COUNT_UNITS), None)
    total = sum(weights, Fraction(0))
    if query.options.public_groups:  # no partition selection: eps/n, no delta
        return [Share(i, eps * w / total) for i, w in enumerate(weights)], None
    if reuse is None:
        total += Fraction(query.options.threshold_weight)
    shares = [Share(i, eps * w / total) for i, w in enumerate(weights)]
    if reuse is None:
        shares.append(Share(None, eps * Fraction(query.options.threshold_weight) / total))
    return shares, reuse
