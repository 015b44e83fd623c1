"""Composition made visible: a dataset's cumulative ε at its total δ, release by release, under
basic and under pld accounting; and how many releases of one kind a budget buys under each.

Both read released, public facts only — each release's charged (ε, δ) and the privacy loss
profiles of its recorded mechanisms (`core.privacy.accounting.losses_of`) — never data. Every
point is computed by the same `composition` the registry charges with, so the last point of a
curve is the dataset's composed total under each accounting.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.privacy.accounting import Accounting, composition
from core.privacy.cost import Cost
from core.privacy.mechanisms import Mechanism, PrivacyLoss

MAX_POINTS = 60  # pld points computed for a long history (each is one PLD composition)
MAX_RELEASES = 100_000  # the teaching search stops here ("at least this many")


@dataclass(frozen=True)
class ChargedRelease:
    """One charged release as the accountant sees it: its id, its charged (ε, δ) and the
    privacy loss profiles to compose (`losses_of` its recorded mechanisms and charge)."""

    id: int
    charged: Cost
    losses: tuple[PrivacyLoss, ...]


@dataclass(frozen=True)
class CumulativePoint:
    """The composed spend after the first `count` releases (the last being release `id`)."""

    count: int
    id: int
    basic_epsilon: float  # Σε of the charges
    basic_delta: float  # Σδ of the charges
    pld_epsilon: float  # ε at the dataset's total δ under pld (never above basic)
    pld_method: str  # which figure holds: "basic", "pld", "zcdp" or "pld+zcdp"


def _points(n: int, max_points: int) -> list[int]:
    """The prefix lengths (1..n) to compute: all when few, else evenly spread, always n."""
    if n <= max_points:
        return list(range(1, n + 1))
    step = n / max_points
    return sorted({max(1, round(step * (i + 1))) for i in range(max_points)} | {n})


def cumulative(
    releases: Sequence[ChargedRelease], delta_total: float, max_points: int = MAX_POINTS
) -> list[CumulativePoint]:
    """The cumulative (ε at `delta_total`) under basic and under pld after each release, in
    the given (release) order. With more than `max_points` releases, points are computed at
    evenly spread releases, always including the last."""
    out = []
    for n in _points(len(releases), max_points):
        upto = releases[:n]
        eps = math.fsum(r.charged.epsilon for r in upto)
        delta = math.fsum(r.charged.delta for r in upto)
        pld = composition([x for r in upto for x in r.losses], delta_total, Accounting.PLD)
        out.append(CumulativePoint(n, upto[-1].id, eps, delta, min(pld.epsilon, eps), pld.method))
    return out


def _losses(per_release: PrivacyLoss | Mechanism | Sequence[PrivacyLoss | Mechanism]):
    items = per_release if isinstance(per_release, Sequence) else [per_release]
    return [x.loss() if isinstance(x, Mechanism) else x for x in items]


def _fits(losses: list[PrivacyLoss], k: int, budget: Cost, accounting: Accounting) -> bool:
    """True when `k` releases, each composed of `losses`, fit `budget` under `accounting`
    (what the registry's charge checks: the composed spend within the total)."""
    c = composition(losses * k, budget.delta, accounting)
    return c.spent.fits(budget)


def releases_that_fit(
    per_release: PrivacyLoss | Mechanism | Sequence[PrivacyLoss | Mechanism],
    budget: Cost,
    accounting: Accounting | str,
    limit: int = MAX_RELEASES,
) -> int:
    """How many releases, each drawing `per_release` (one mechanism or several), a fresh
    dataset budget `budget` = (ε, δ) admits under `accounting`: the largest k whose composed
    spend fits, found by doubling then binary search over k with the accountant (the spend
    does not decrease in k). `limit` when at least that many fit (e.g. a release that costs
    nothing)."""
    accounting = Accounting(accounting)
    losses = _losses(per_release)
    if not _fits(losses, 1, budget, accounting):
        return 0
    lo = 1
    if accounting is Accounting.PLD:  # pld is never above basic: basic's count fits too
        lo = max(lo, releases_that_fit(losses, budget, Accounting.BASIC, limit))
    hi = lo * 2
    while hi <= limit and _fits(losses, hi, budget, accounting):
        lo, hi = hi, hi * 2
    if hi > limit:
        if _fits(losses, limit, budget, accounting):
            return limit
        hi = limit
    while hi - lo > 1:  # lo fits, hi does not
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _fits(losses, mid, budget, accounting) else (lo, mid)
    return lo
