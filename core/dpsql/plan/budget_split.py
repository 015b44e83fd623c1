"""How a query's epsilon is split over its mechanisms (spec §2.10, ZetaSQL convention).

n DP aggregates plus the implicit unit count share epsilon by weight (default: eps/(n+1) each);
a COUNT(DISTINCT uid) in the query doubles as the threshold statistic (eps/n). AVG halves its
share over (count, normalised sum), VAR/STDDEV thirds it over (count, sum, sum of squares).
Delta goes entirely to thresholding with Laplace noise. With Gaussian noise (`noise =
'gaussian'`) the counts and sums are (ε_i, δ_i)-DP too: half of δ goes to thresholding and half
is shared equally by the Gaussian statistics (all of δ with PUBLIC_GROUPS), and a
COUNT(DISTINCT uid) is not reused as the threshold statistic (the threshold's δ is computed for
discrete Laplace noise), so the threshold has its own share.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from core.dpsql.parse.ir import AggKind, DPQuery, NoiseKind


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
    if query.options.noise is NoiseKind.GAUSSIAN:
        reuse = None
    total = sum(weights, Fraction(0))
    if query.options.public_groups:  # no partition selection: eps/n, no delta
        return [Share(i, eps * w / total) for i, w in enumerate(weights)], None
    if reuse is None:
        total += Fraction(query.options.threshold_weight)
    shares = [Share(i, eps * w / total) for i, w in enumerate(weights)]
    if reuse is None:
        shares.append(Share(None, eps * Fraction(query.options.threshold_weight) / total))
    return shares, reuse


def split_delta(query: DPQuery, gaussian_statistics: int) -> tuple[float, float]:
    """(δ of each Gaussian statistic, δ of partition selection): the query's δ to thresholding
    when nothing is Gaussian; else half to thresholding and half shared equally by the
    `gaussian_statistics` (all of it with PUBLIC_GROUPS, which has no threshold)."""
    delta = float(query.options.delta)
    if query.options.noise is not NoiseKind.GAUSSIAN or gaussian_statistics == 0:
        return 0.0, delta
    if query.options.public_groups:
        return delta / gaussian_statistics, 0.0
    return delta / 2 / gaussian_statistics, delta / 2
