"""Readable log axes: ticks at 1, 2 and 5 of each decade, each labelled with its full value
("0.02", "0.05", "0.1"), never plotly's bare minor labels "2 … 8" that read like values."""

from __future__ import annotations

import math
from collections.abc import Iterable

STEPS = (1, 2, 5)


def log_ticks(values: Iterable[float], steps: tuple[int, ...] = STEPS) -> list[float]:
    """1-2-5 ticks covering the positive `values` (one decade around them when they are few)."""
    positive = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not positive:
        return [1.0]
    lo = math.floor(math.log10(min(positive)))
    hi = math.ceil(math.log10(max(positive)))
    if hi == lo:
        hi += 1
    ticks = [float(f"{s}e{e}") for e in range(lo, hi + 1) for s in steps]
    low, high = min(positive), max(positive)
    inside = [t for t in ticks if low / 2.5 <= t <= high * 2.5]
    if len(inside) > 9:  # many decades: label the decades only
        inside = [t for t in inside if round(t / 10 ** math.floor(math.log10(t)), 6) == 1]
    return inside or ticks


def log_axis(values: Iterable[float], title: str) -> dict:
    """A plotly axis dict: log type, explicit 1-2-5 ticks with full labels, no minor labels."""
    ticks = log_ticks(values)
    return {
        "type": "log",
        "title": title,
        "tickmode": "array",
        "tickvals": ticks,
        "ticktext": [f"{t:g}" for t in ticks],
        "minor": {"showgrid": False, "ticks": ""},
    }
