"""What data users can recover: an unbiased estimator of the original SA distribution from the
published table and its metadata only, with its variance (spec section 6.4).

For records S of sub-table i: E[f*(x)] = f(x) p + |S| q, so f_hat = (f* - |S| q) / p, and
Var = [f (p+q)(1-p-q) + (|S| - f) q (1-q)] / p^2 with f_hat clipped to [0, |S|] plugged in.
Sub-tables are independent, so estimates and variances add over those whose domain holds x.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    value: str
    estimate: Fraction
    variance: Fraction

    @property
    def half_width(self) -> float:
        """95% normal-approximation half-width."""
        return Z95 * math.sqrt(float(self.variance))


def subtable_estimate(
    observed: dict[str, int], size: int, p: Fraction, q: Fraction, domain: Sequence[str]
) -> dict[str, tuple[Fraction, Fraction]]:
    """value -> (estimate, variance) within one sub-table (or a record set S inside it)."""
    out = {}
    for x in domain:
        f_star = observed.get(x, 0)
        est = (f_star - size * q) / p
        f = min(max(est, Fraction(0)), Fraction(size))
        var = (f * (p + q) * (1 - p - q) + (size - f) * q * (1 - q)) / (p * p)
        out[x] = (est, var)
    return out


def estimate_distribution(
    published: pd.DataFrame, sa: str, subtable_column: str, subtables_meta: Sequence[dict]
) -> list[Estimate]:
    """Estimated original counts per value, summed over sub-tables (metadata as published)."""
    ids = published[subtable_column].to_numpy()
    values = published[sa].astype(str).to_numpy()
    totals: dict[str, list[Fraction]] = {}
    for meta in subtables_meta:
        rows = ids == meta["id"]
        uniq, cnt = np.unique(values[rows], return_counts=True)
        observed = dict(zip(uniq.tolist(), cnt.tolist(), strict=True))
        per = subtable_estimate(
            observed, int(rows.sum()), Fraction(meta["p"]), Fraction(meta["q"]), meta["domain"]
        )
        for x, (est, var) in per.items():
            acc = totals.setdefault(x, [Fraction(0), Fraction(0)])
            acc[0] += est
            acc[1] += var
    return [Estimate(value=x, estimate=e, variance=v) for x, (e, v) in totals.items()]


def true_variance(f: int, size: int, p: Fraction, q: Fraction) -> Fraction:
    """Var[f_hat] at the true count f (used by evaluation and tests)."""
    return (f * (p + q) * (1 - p - q) + (size - f) * q * (1 - q)) / (p * p)
