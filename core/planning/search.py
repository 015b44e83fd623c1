"""Searching a monotone condition for its smallest passing value (ε, a share, ρ2 …).

Every planner asks the same question of a mechanism-level accuracy that improves as the budget
grows: what is the smallest value at which the target is met? The accuracy of a discrete
mechanism moves in integer steps, so the answer is found by bisection (in log space for ε) and
then rounded UP to a readable number of significant digits, re-checked at the rounded value:
the planned number that is shown is one at which the condition was verified, never an
interpolation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

SIGNIFICANT = 3  # digits of a planned ε a person reads and types back


def round_up(x: float, digits: int = SIGNIFICANT) -> float:
    """The smallest number with `digits` significant digits that is >= x (x > 0)."""
    if not (x > 0 and math.isfinite(x)):
        raise ValueError(f"round_up needs a finite x > 0, got {x}")
    exponent = math.floor(math.log10(x)) - digits + 1
    step = 10.0**exponent
    value = math.ceil(x / step - 1e-9) * step
    return float(f"{value:.{digits}g}")


def next_up(x: float, digits: int = SIGNIFICANT) -> float:
    """The next readable number above x (x itself has `digits` significant digits)."""
    exponent = math.floor(math.log10(x)) - digits + 1
    return round_up(x + 10.0**exponent * 0.5, digits)


def next_down(x: float, digits: int = SIGNIFICANT) -> float:
    """The readable number just below x (x itself has `digits` significant digits)."""
    exponent = math.floor(math.log10(x * (1 - 1e-12))) - digits + 1
    below = x - 10.0**exponent
    if below <= 0:
        return x / 10
    return float(f"{below:.{digits}g}")


def smallest_passing(
    passes: Callable[[float], bool],
    lo: float,
    hi: float,
    rel_tol: float = 1e-4,
    digits: int = SIGNIFICANT,
) -> float | None:
    """The smallest readable x in [lo, hi] with `passes(x)`, for a condition that is False
    below some point and True above it; None when it fails even at `hi`.

    Bisection in log space to a relative width `rel_tol`, then rounded up to `digits`
    significant digits and stepped up until the condition holds at the rounded value (a step
    function may need one more step), so the returned value always passes."""
    if not 0 < lo < hi:
        raise ValueError(f"need 0 < lo < hi, got {lo}, {hi}")
    if not passes(hi):
        return None
    if passes(lo):
        return _verified(passes, round_up(lo, digits), hi, digits)
    a, b = math.log(lo), math.log(hi)  # passes(exp(a)) is False, passes(exp(b)) is True
    while b - a > rel_tol:
        mid = 0.5 * (a + b)
        if passes(math.exp(mid)):
            b = mid
        else:
            a = mid
    found = _verified(passes, round_up(math.exp(b), digits), hi, digits)
    while found > lo:  # bisection stops just above the step: a readable value below may pass
        below = next_down(found, digits)
        if below < lo or not passes(below):
            break
        found = below
    return found


def _verified(passes, x: float, hi: float, digits: int) -> float:
    for _ in range(1000):
        if passes(x):
            return x
        x = next_up(x, digits)
    return hi  # passes(hi) was checked by the caller
