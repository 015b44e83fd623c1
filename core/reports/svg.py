"""Small inline SVG figures (no scripts, no external references, no xmlns needed in HTML5)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def bar_chart(
    labels: list[str],
    values: list[float],
    title: str,
    errors: list[float | None] | None = None,
    width: int = 640,
) -> str:
    """Horizontal bars with optional ± error whiskers; negative values drawn left of zero."""
    n = len(values)
    if n == 0:
        return f'<p class="muted">{escape(title)}: nothing to draw.</p>'
    errors = errors or [None] * n
    bar_h, gap, left, right, top = 18, 6, 160, 70, 28
    height = top + n * (bar_h + gap) + 10
    lows = [v - (e or 0) for v, e in zip(values, errors, strict=True)]
    highs = [v + (e or 0) for v, e in zip(values, errors, strict=True)]
    lo, hi = min(0.0, *lows), max(0.0, *highs)
    span = (hi - lo) or 1.0
    plot_w = width - left - right

    def x(v: float) -> float:
        return left + (v - lo) / span * plot_w

    parts = [
        f'<svg class="figure bar-chart" role="img" aria-label="{escape(title)}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f'<text x="{left}" y="16" class="fig-title">{escape(title)}</text>',
        f'<line x1="{x(0):.1f}" y1="{top - 4}" x2="{x(0):.1f}" y2="{height - 6}" stroke="#555"/>',
    ]
    for i, (label, v, e) in enumerate(zip(labels, values, errors, strict=True)):
        y = top + i * (bar_h + gap)
        x0, x1 = sorted((x(0), x(v)))
        parts.append(
            f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{escape(str(label)[:24])}</text>'
            f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 0.5):.1f}" height="{bar_h}" '
            f'fill="#4c78a8"><title>{escape(str(label))}: {_fmt(v)}</title></rect>'
        )
        if e:
            parts.append(
                f'<line x1="{x(v - e):.1f}" y1="{y + bar_h / 2}" x2="{x(v + e):.1f}" '
                f'y2="{y + bar_h / 2}" stroke="#d62728" stroke-width="2"/>'
            )
        parts.append(f'<text x="{x(max(v, 0) + (e or 0)) + 4:.1f}" y="{y + 13}">{_fmt(v)}</text>')
    parts.append("</svg>")
    return "".join(parts)


# -- text measure and legend layout ---------------------------------------------------------
# Advance widths in em, rounded up from DejaVu Sans (the widest common sans-serif; Chromium's
# system-ui on Linux), so an estimate is never shorter than the drawn text.
_NARROW = set("ijl.,:;!|'`")
_HALF = set('frt()[]{}/\\-"*')
_WIDE_LOWER = {"m": 1.0, "w": 0.86}
_WIDE_UPPER = {"M": 0.9, "W": 1.02}


def _char_em(ch: str) -> float:
    if ch == " ":
        return 0.33
    if ch in _NARROW:
        return 0.3
    if ch in _HALF:
        return 0.52
    if ch in _WIDE_LOWER:
        return _WIDE_LOWER[ch]
    if ch in _WIDE_UPPER:
        return _WIDE_UPPER[ch]
    if ch.isdigit():
        return 0.65
    if ch.isascii() and ch.isupper():
        return 0.8
    if ch.isascii():
        return 0.66
    return 0.9  # ≤, –, °, ², ε and the like


def text_width(text: str, font_px: float) -> float:
    """An upper estimate of `text`'s drawn width in px at `font_px` (sans-serif)."""
    return sum(_char_em(ch) for ch in str(text)) * font_px * 1.04


@dataclass(frozen=True)
class LegendBox:
    """One legend entry: its box (x, y, w, h) holding a swatch then its label at `text_x`."""

    x: float
    y: float
    w: float
    h: float
    swatch: float
    text_x: float


def legend_layout(
    labels: list[str], width: float, font_px: float = 11, swatch: float = 14, gap: float = 14
) -> list[LegendBox]:
    """Boxes for legend entries laid out left to right, each as wide as its swatch plus its
    label's estimated text width, wrapping to a new row when the next box would pass `width`
    (a box wider than `width` gets a row of its own). Boxes never overlap: each starts `gap`
    after the previous box's end, and rows are one box height + a quarter font apart."""
    h = font_px * 1.3
    row_h = h + font_px * 0.25
    boxes: list[LegendBox] = []
    x = y = 0.0
    for label in labels:
        w = swatch + 4 + text_width(label, font_px)
        if x > 0 and x + w > width:
            x, y = 0.0, y + row_h
        boxes.append(LegendBox(x, y, w, h, swatch, x + swatch + 4))
        x += w + gap
    return boxes
