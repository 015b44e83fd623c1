"""Numbers shown to people, rounded once and in one place (issue 29).

A budget is a float sum: 1 - (0.1 + 0.3 + 0.7) is 0.10000000000000009 and 2 - 1.2 is
0.8000000000000000444 (printed 0.7999999999999999 by some paths). Everything a person reads —
CLI JSON and text, the dataset view, reports — passes it through `shown`, which keeps 12
significant digits: far below any budget's meaning, far above float noise. Stored values are
never rounded (the registry keeps its sums exact as floats); only what is displayed.
"""

from __future__ import annotations

import math

SIGNIFICANT_DIGITS = 12


def shown(value: float | int | None) -> float | int | None:
    """`value` rounded to `SIGNIFICANT_DIGITS` significant digits for display (ints, None and
    non-finite values unchanged)."""
    if value is None or isinstance(value, bool | int):
        return value
    number = float(value)
    if not math.isfinite(number) or number == 0:
        return number
    return float(f"{number:.{SIGNIFICANT_DIGITS}g}")


def delta_text(delta: float | None) -> str:
    """δ as a short text for a table cell: "0", "1e-05", "8e-07" (scientific below 0.001, where
    a decimal 0.0000008 is wider than its column), else `shown`'s value."""
    d = shown(delta)
    if not d:
        return "0"
    return f"{d:.3g}" if abs(d) < 1e-3 else f"{d:g}"
