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

from core.balancing.records import value_labels

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
    values = value_labels(published[sa])
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


def random_count_queries(
    original: pd.DataFrame,
    published: pd.DataFrame,
    sa: str,
    subtable_column: str,
    subtables_meta: Sequence[dict],
    columns: Sequence[str],
    noise,
    n_queries: int = 50,
    sanity: float = 0.001,
) -> pd.DataFrame:
    """EVALUATION ONLY (uses the raw data): random count queries "SA = x AND col = v".

    The estimate uses only the published table and metadata (record set S = rows matching the
    predicate, per sub-table); the true count comes from `original`. Relative error is
    |estimate - true| / max(true, sanity * |T|). Query choices are drawn from `noise`.
    """
    cols = [c for c in columns if c in published.columns and c in original.columns]
    domain = sorted({v for m in subtables_meta for v in m["domain"]})
    if not cols or not domain:
        return pd.DataFrame()
    # one spelling of missing on both sides (MISSING_LABEL): a missing SA value or predicate
    # level is a category like any other, in the truth as in the estimate
    pub_sa = value_labels(published[sa])
    pub_ids = published[subtable_column].to_numpy()
    orig_sa = value_labels(original[sa])
    floor = max(sanity * len(original), 1.0)
    rows = []
    picks_col = noise.integers(len(cols), size=n_queries)
    picks_val = noise.integers(len(domain), size=n_queries)
    picks_row = noise.integers(len(published), size=n_queries)
    pub_levels = {c: value_labels(published[c]) for c in cols}
    orig_levels = {c: value_labels(original[c]) for c in cols}
    for qc, qv, qr in zip(picks_col.tolist(), picks_val.tolist(), picks_row.tolist(), strict=True):
        col, x = cols[qc], domain[qv]
        level = pub_levels[col][qr]  # a level that occurs, so the predicate selects rows
        in_pub = pub_levels[col] == level
        est = Fraction(0)
        var = Fraction(0)
        for meta in subtables_meta:
            if x not in meta["domain"]:
                continue
            rows_s = in_pub & (pub_ids == meta["id"])
            observed = int((pub_sa[rows_s] == x).sum())
            e, v = subtable_estimate(
                {x: observed}, int(rows_s.sum()), Fraction(meta["p"]), Fraction(meta["q"]), [x]
            )[x]
            est += e
            var += v
        true = int(((orig_levels[col] == level) & (orig_sa == x)).sum())
        half = Z95 * math.sqrt(float(var))
        rows.append(
            {
                "query": f"{sa} = {x} AND {col} = {level}",
                "true": true,
                "estimate": float(est),
                "half_width_95": half,
                "relative_error": abs(float(est) - true) / max(true, floor),
                "covered": abs(float(est) - true) <= half,
            }
        )
    return pd.DataFrame(rows)
