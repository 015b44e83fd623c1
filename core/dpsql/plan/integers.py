"""Integer units for noisy sums (spec §2.5): values are scaled by 2^j and rounded, so that the
noise is discrete Laplace on integers (exact, no floating-point attacks). j is chosen from
public parameters only: the bound, the ε share, and how many rows a unit may add.
"""

from __future__ import annotations

import math
from fractions import Fraction

from core.dpsql.parse.ir import DPAggregate

MAX_EXPONENT = 24
# Integer partials stay below 2^31 per unit, so 2^31 units cannot overflow a 64-bit sum.
MAX_UNIT_CONTRIBUTION = 2**31
# Integer noise scales stay below 2^26: a larger scale drowns every result, and noisy
# integer sums stay far inside int64.
MAX_INT_SCALE = 2**26


def choose_exponent(bound: float, epsilon: Fraction, factor: int) -> int:
    """Largest j <= 24 with factor*|bound|*2^j <= 2^31 and its noise scale <= 2^26 (public only)."""
    if bound == 0:
        return MAX_EXPONENT
    j = MAX_EXPONENT
    while j > -60 and (
        factor * abs(bound) * 2.0**j > MAX_UNIT_CONTRIBUTION
        or factor * abs(bound) * 2.0**j / float(epsilon) > MAX_INT_SCALE
    ):
        j -= 1
    return j


def int_bound(value: float, exponent: int) -> int:
    """round(value * 2^j) as SQL's ROUND does it (half away from zero)."""
    scaled = value * 2.0**exponent
    return int(math.copysign(math.floor(abs(scaled) + 0.5), scaled))


def midpoints(agg: DPAggregate) -> tuple[float, float, float]:
    """m, m2 and R2 for bounded mean/variance (Google BoundedVariance)."""
    lo, hi = agg.lower, agg.upper
    m = (lo + hi) / 2
    if lo < 0 < hi:
        r2 = max(lo * lo, hi * hi)
        m2 = r2 / 2
    else:
        r2 = abs(hi * hi - lo * lo)
        m2 = (lo * lo + hi * hi) / 2
    return m, m2, r2
