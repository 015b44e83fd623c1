"""Contribution bounds that are not guessed: a charged DP log-histogram of a numeric column.

A DP SUM or AVG needs bounds [L, U] on each unit's contribution; guessing them from the data
leaks it, and guessing blindly either clips much of the data or drowns it in noise. This
helper spends a small, charged ε (its own governed release, tool "bounds") on a histogram of
one value per unit — each unit's sum (or mean) of the column — over signed logarithmic bins
(…, [-4, -2), [-2, -1), [-1, 0), [0, 1), [1, 2), [2, 4), … in units of `scale`), the shape
Google's ApproxBounds and SmartNoise's `approx_bounds` use (Tumult's `get_bounds` likewise
returns a power-of-two bound from a noisy histogram). From the noisy counts alone it proposes
the narrowest power-of-two bounds that leave at most `clip_share` of the units outside, and
states the estimated share clipped. Everything proposed is post-processing of the histogram.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import InputError
from core.privacy import Accountant, Cost, DiscreteLaplace

TOOL = "bounds"
DEFAULT_EPSILON = 0.1
DEFAULT_CLIP_SHARE = 0.01
MAX_EXPONENT = 60  # bins up to scale x 2^60 on each side
STATISTICS = ("sum", "mean")


def edges(scale: float) -> np.ndarray:
    """Bin edges: -scale·2^60, …, -scale·2, -scale, 0, scale, 2·scale, …, scale·2^60 (bin k is
    [edges[k], edges[k + 1])); values beyond the outer edges fall in the outer bins."""
    pos = scale * 2.0 ** np.arange(0, MAX_EXPONENT + 1)
    return np.concatenate([-pos[::-1], [0.0], pos])


def histogram(values: np.ndarray, scale: float) -> np.ndarray:
    """Exact count of values per log bin (one value per unit)."""
    e = edges(scale)
    idx = np.clip(np.searchsorted(e, np.asarray(values, float), side="right") - 1, 0, len(e) - 2)
    return np.bincount(idx, minlength=len(e) - 1).astype(np.int64)


@dataclass(frozen=True)
class BoundsProposal:
    """What the bounds release states: the noisy log-histogram and the proposed bounds."""

    column: str
    statistic: str
    scale: float
    epsilon: float
    noisy_counts: tuple[int, ...]
    lower: float
    upper: float
    clipped_share: float  # estimated share of units outside [lower, upper] (noisy)
    clipped_share_sd: float  # its noise standard deviation
    noise_scale: float
    clip_share: float

    def describe(self) -> str:
        return (
            f"Bounds [{self.lower:g}, {self.upper:g}] for each unit's {self.statistic} of "
            f"'{self.column}' leave an estimated {self.clipped_share:.1%} (± "
            f"{self.clipped_share_sd:.1%}) of units clipped; they come from a DP log-histogram "
            f"at epsilon {self.epsilon:g}, charged as its own release."
        )

    def to_json(self) -> dict:
        e = edges(self.scale)
        return {
            "tool": TOOL,
            "column": self.column,
            "statistic": self.statistic,
            "scale": self.scale,
            "epsilon": self.epsilon,
            "lower": self.lower,
            "upper": self.upper,
            "clipped_share": self.clipped_share,
            "clipped_share_sd": self.clipped_share_sd,
            "clip_share": self.clip_share,
            "noise_scale": self.noise_scale,
            "bins": [
                {"from": float(e[k]), "to": float(e[k + 1]), "noisy_count": int(c)}
                for k, c in enumerate(self.noisy_counts)
                if c > 0
            ],
            "describe": self.describe(),
        }


def unit_values(frame: pd.DataFrame, column: str, unit: str | None, statistic: str) -> np.ndarray:
    """One value per unit: the sum (or mean) of `column` over the unit's rows (`unit` None:
    each row is a unit). Missing values count as 0 in a sum and are skipped in a mean."""
    if statistic not in STATISTICS:
        raise InputError(f"--statistic must be sum or mean, got '{statistic}'.")
    if column not in frame.columns:
        raise InputError(
            f"no column '{column}' in the table (columns: {', '.join(map(str, frame.columns))}). "
            "Fix: --column NAME of a numeric column."
        )
    values = pd.to_numeric(frame[column], errors="coerce")
    if values.notna().sum() == 0 and len(frame):
        raise InputError(f"column '{column}' holds no numbers. Fix: choose a numeric column.")
    if unit is None:
        out = values.fillna(0.0) if statistic == "sum" else values.dropna()
        return out.to_numpy(dtype=float)
    grouped = values.groupby(frame[unit], dropna=True)
    out = grouped.sum(min_count=0) if statistic == "sum" else grouped.mean().dropna()
    return out.to_numpy(dtype=float)


def unit_values_in_place(path, schema, column: str, unit: str | None, statistic: str) -> np.ndarray:
    """`unit_values` of a table read in place in its schema (`core.data.relation`, e.g. an
    upload on the DP SQL page): the engine sums (or averages) each unit's values where the file
    lies, so one value per unit reaches Python, not the table. Same rules as `unit_values`."""
    import duckdb

    from core.data.relation import guard_connection, identifier, relation_sql

    if statistic not in STATISTICS:
        raise InputError(f"--statistic must be sum or mean, got '{statistic}'.")
    if schema.column(column) is None:
        raise InputError(
            f"no column '{column}' in the table (columns: {', '.join(schema.names)}). "
            "Fix: --column NAME of a numeric column."
        )
    table, value = f"({relation_sql(path, schema)})", f"TRY_CAST({identifier(column)} AS DOUBLE)"
    if unit is None:
        kept = f"COALESCE({value}, 0)" if statistic == "sum" else value
        sql = f"SELECT {kept} AS v FROM {table}"
    else:
        per_unit = f"COALESCE(SUM({value}), 0)" if statistic == "sum" else f"AVG({value})"
        key = identifier(unit)
        sql = f"SELECT {per_unit} AS v FROM {table} WHERE {key} IS NOT NULL GROUP BY {key}"
    con = duckdb.connect()
    try:
        guard_connection(con)  # the declared read stays total (core.data.relation)
        numbers, rows = con.execute(f"SELECT count({value}), count(*) FROM {table}").fetchone()
        if numbers == 0 and rows:
            raise InputError(f"column '{column}' holds no numbers. Fix: choose a numeric column.")
        out = con.execute(f"SELECT v FROM ({sql}) WHERE v IS NOT NULL").fetchnumpy()["v"]
    finally:
        con.close()
    return np.asarray(out, dtype=float)


def measure_bounds(
    values: np.ndarray,
    epsilon: float,
    accountant: Accountant,
    *,
    column: str,
    statistic: str = "sum",
    scale: float = 1.0,
    clip_share: float = DEFAULT_CLIP_SHARE,
) -> BoundsProposal:
    """Draw the noisy log-histogram of `values` (one per unit) and propose bounds.

    Privacy claim: ε-DP for the unit (add or remove one unit): the unit's one value falls in
    exactly one bin, so the vector of bin counts has L1 sensitivity 1 and gets discrete Laplace
    noise of scale 1/ε per bin (one `DiscreteLaplace` over disjoint bins). The bounds and the
    clipped share are computed from the noisy counts only."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"--epsilon must be a number > 0, got {epsilon}.")
    if not (math.isfinite(scale) and scale > 0):
        raise InputError(f"--scale (the smallest bin's width) must be > 0, got {scale}.")
    if not 0 < clip_share < 0.5:
        raise InputError(f"--clip-share must be in (0, 0.5), got {clip_share}.")
    accountant.require(Cost(float(epsilon)), "the bounds histogram")
    mech = DiscreteLaplace(
        f"bounds: log-histogram of each unit's {statistic} of {column}",
        sensitivity=1,
        epsilon=float(epsilon),
    )
    noisy = mech.draw(accountant, histogram(values, scale))
    lower, upper, share, sd = propose(noisy, scale, clip_share, mech.scale)
    return BoundsProposal(
        column, statistic, float(scale), float(epsilon), tuple(int(c) for c in noisy),
        lower, upper, share, sd, mech.scale, float(clip_share),
    )  # fmt: skip


def occupied_threshold(noise_scale: float, bins: int, miss: float = 0.01) -> int:
    """The smallest integer τ with P(Z >= τ) <= miss / bins for one bin's discrete Laplace
    noise Z: an empty bin then reaches τ with probability at most `miss` (1 %) over all bins."""
    mech = DiscreteLaplace("threshold", sensitivity=1, epsilon=1.0 / noise_scale)
    tau = 1
    while mech.tail(tau - 1) / 2 > miss / bins:  # P(Z >= τ) = P(|Z| > τ - 1) / 2
        tau += 1
    return tau


def propose(noisy, scale: float, clip_share: float, noise_scale: float):
    """(lower, upper, estimated clipped share, its sd) from noisy bin counts (post-processing).

    A bin counts as occupied when its noisy count reaches τ (`occupied_threshold`: an empty bin
    passes with probability <= 1 % over all bins, as ApproxBounds' threshold); the bounds are
    the largest lower and smallest upper power-of-two edges (0 always inside) leaving at most
    `clip_share` of the occupied bins' noisy mass outside, half on each side. The clipped share
    is then estimated from every bin outside (unbiased, with its noise sd): units in bins below
    τ are counted there, at the price of a wider uncertainty."""
    e = edges(scale)
    counts = np.asarray(noisy, float)
    tau = occupied_threshold(noise_scale, len(counts))
    mass = np.where(counts >= tau, counts, 0.0)
    total = mass.sum()
    if total <= 0:
        raise InputError(
            f"no bin of the noisy histogram reaches the occupancy threshold {tau} (too few "
            "units, or epsilon too small). Nothing could be proposed; the charge stands. "
            "Fix: a larger epsilon or more data."
        )
    zero = MAX_EXPONENT + 1  # index of the bin [0, scale)
    below = np.cumsum(mass) / total  # share in bins 0..k
    above = np.cumsum(mass[::-1])[::-1] / total  # share in bins k..end
    half = clip_share / 2
    lo_bin = next(k for k in range(len(mass)) if below[k] > half or k == zero)
    hi_bin = next(k for k in range(len(mass) - 1, -1, -1) if above[k] > half or k == zero - 1)
    lower = float(min(e[lo_bin], 0.0))
    upper = float(max(e[hi_bin + 1], 0.0))
    if lower == upper:
        upper = float(scale)
    # the clipped share from the RAW noisy counts outside (unbiased, so units in bins below τ
    # are counted too), over the noisy total; its sd is the noise of those bins' sum
    outside = ~((e[:-1] >= lower) & (e[1:] <= upper))
    n_total = max(float(counts.sum()), total)
    share = float(min(max(counts[outside].sum(), 0.0) / n_total, 1.0))
    sd = float(math.sqrt(2.0 * int(outside.sum())) * noise_scale / n_total)
    return lower, upper, share, sd
