"""The DP SQL sections of a report: the guarantee for its unit column, accuracy from public
parameters (each released number's 95 % noise interval, the threshold's survival curve) and
the released rows."""

from __future__ import annotations

from html import escape

from core.dpsql.record import SqlArtefact
from core.privacy import NoisyThreshold
from core.registry import Release
from core.reports.common import DP_LIMITS, cell, does_not_mean, dp_claim, table
from core.reports.svg import bar_chart


def unit_words(art: SqlArtefact) -> str:
    if art.unit_column:
        return f"one privacy unit: all rows with the same value of column {art.unit_column}"
    return "one row (each row is one person)"


def guarantee(release: Release, art: SqlArtefact, dataset=None) -> str:
    limits = [*DP_LIMITS, "It does not cover a person who appears under several units."]
    return dp_claim(release, unit_words(art)) + does_not_mean(release, limits)


def survival_rows(th: NoisyThreshold) -> list[list]:
    """P(released) for groups of n units around the threshold (exact, discrete noise)."""
    ns = sorted({max(1, int(th.threshold + k * th.scale)) for k in (-3, -2, -1, 0, 1, 2, 3, 4)})
    return [[n, th.survival(n)] for n in ns]


def accuracy(release: Release, art: SqlArtefact) -> str:
    parts = [
        "<p>Every released number carries its 95 % noise-only interval (it excludes clamping "
        "and sampling bias); the mechanisms table gives each statistic's scale.</p>"
    ]
    thresholds = [m for m in release.mechanisms if isinstance(m, NoisyThreshold)]
    if thresholds:
        th = thresholds[0]
        parts.append(
            f"<p>Partition selection: a group is released when its noisy unit count is ≥ "
            f"T = {th.threshold} (discrete Laplace, scale {th.scale:.4g}). Probability that a "
            "group with n units is released:</p>"
            + table(["units n", "P(released)"], survival_rows(th), "survival")
        )
    elif art.threshold is None:
        parts.append(
            "<p>Public groups: every key of the public table is released (no threshold).</p>"
        )
    return "".join(parts)


def figures(release: Release, art: SqlArtefact) -> str:
    cols, data = list(art.columns), list(art.rows)
    numeric = [c for c in cols if c in art.intervals]
    out = f"<p>Query (as run):</p><pre>{escape(art.query)}</pre>"
    if numeric and data:
        j = cols.index(numeric[0])
        keys = [i for i, c in enumerate(cols) if c not in art.intervals]
        labels = [
            " / ".join(cell(r[i]) for i in keys) or f"row {n + 1}" for n, r in enumerate(data)
        ]
        values = [float(r[j]) if isinstance(r[j], int | float) else 0.0 for r in data]
        half = [
            None if lo is None or hi is None else (hi - lo) / 2
            for lo, hi in art.intervals[numeric[0]]
        ]
        out += bar_chart(
            labels[:40], values[:40], f"{numeric[0]} (± 95 % noise interval)", half[:40]
        )
    shown = []
    for n, r in enumerate(data):
        row = []
        for c, v in zip(cols, r, strict=True):
            iv = art.intervals.get(c)
            if iv and isinstance(v, int | float) and iv[n][0] is not None:
                row.append(f"{v:.6g} [{iv[n][0]:.4g}, {iv[n][1]:.4g}]")
            else:
                row.append(v)
        shown.append(row)
    return out + table(cols, shown, "result")
