"""Small inline SVG figures (no scripts, no external references, no xmlns needed in HTML5)."""

from __future__ import annotations

import math
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


def _colour(t: float) -> str:
    """Light yellow (t=0) to dark red (t=1)."""
    t = min(1.0, max(0.0, t))
    r = int(255 - 80 * t)
    g = int(245 - 215 * t)
    b = int(200 - 170 * t)
    return f"#{r:02x}{g:02x}{b:02x}"


def leaves_map(leaves: list[dict], rows: int, cols: int, title: str, size: int = 520) -> str:
    """HTF leaves as rectangles coloured by noisy density (count per cell, log scale).
    Row 0 is the south edge of the bounding box, so it is drawn at the bottom."""
    if not leaves:
        return f'<p class="muted">{escape(title)}: no leaves.</p>'
    sx, sy = size / cols, size / rows
    dens = [
        max(leaf["noisy_count"], 0)
        / max(1, (leaf["row1"] - leaf["row0"]) * (leaf["col1"] - leaf["col0"]))
        for leaf in leaves
    ]
    top = math.log1p(max(dens)) or 1.0
    parts = [
        f'<svg class="figure leaves-map" role="img" aria-label="{escape(title)}" '
        f'width="{size}" height="{size + 24}" viewBox="0 0 {size} {size + 24}">',
        f'<text x="0" y="16" class="fig-title">{escape(title)}</text>',
        '<g transform="translate(0,24)">',
    ]
    for leaf, d in zip(leaves, dens, strict=True):
        x = leaf["col0"] * sx
        y = (rows - leaf["row1"]) * sy
        w = (leaf["col1"] - leaf["col0"]) * sx
        h = (leaf["row1"] - leaf["row0"]) * sy
        parts.append(
            f'<rect x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" '
            f'fill="{_colour(math.log1p(d) / top)}" stroke="#333" stroke-width="0.5">'
            f"<title>rows {leaf['row0']}-{leaf['row1']}, cols {leaf['col0']}-{leaf['col1']}: "
            f"noisy count {_fmt(leaf['noisy_count'])}</title></rect>"
        )
    parts.append("</g></svg>")
    return "".join(parts)
