"""Small inline SVG figures (no scripts, no external references, no xmlns needed in HTML5)."""

from __future__ import annotations

from html import escape

from core.viz.colorscale import density_scale, leaf_density


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


def leaves_map(art, title: str, size: int = 560) -> str:
    """The released leaves as rectangles coloured by noisy density (points per km², on bins
    fitted to this release), over country and US-state boundaries, with a legend.
    Row 0 is the south edge of the bounding box, so it is drawn at the bottom."""
    if not art.leaves:
        return f'<p class="muted">{escape(title)}: no leaves.</p>'
    g = art.grid
    sx, sy = size / g.cols, size / g.rows
    dens = leaf_density(art.values, art.leaves, g.bbox, g.rows, g.cols)
    scale = density_scale(dens)
    colours = scale.colors_of(dens)
    legend_h = 36
    parts = [
        f'<svg class="figure leaves-map" role="img" aria-label="{escape(title)}" '
        f'width="{size}" height="{size + 24 + legend_h + 10}" '
        f'viewBox="0 0 {size} {size + 24 + legend_h + 10}">',
        f'<text x="0" y="16" class="fig-title">{escape(title)}</text>',
        f'<g transform="translate(0,24)"><rect width="{size}" height="{size}" fill="#f4f4f4"/>',
    ]
    for (r0, r1, c0, c1), v, d, fill in zip(art.leaves, art.values, dens, colours, strict=True):
        parts.append(
            f'<rect class="leaf" x="{c0 * sx:.2f}" y="{(g.rows - r1) * sy:.2f}" width="{(c1 - c0) * sx:.2f}" '
            f'height="{(r1 - r0) * sy:.2f}" fill="{fill}" stroke="#555" '
            f'stroke-width="0.3"><title>noisy count {_fmt(v)}; {_fmt(d)} per km²</title></rect>'
        )
    parts.append(_boundaries(art, size))
    parts.append("</g>")
    parts.append(_legend(scale, size, size + 24 + 6))
    parts.append("</svg>")
    return "".join(parts)


def _boundaries(art, size: int) -> str:
    """Country and US-state outlines in the bbox (offline public layers), as SVG paths."""
    try:
        from core.viz.basemap import reference_layers
    except Exception:  # noqa: BLE001 - a report without outlines is still a report
        return ""
    g = art.grid
    minlon, minlat, _, maxlat = g.bbox
    try:
        layers = reference_layers(tuple(g.bbox))
    except Exception:  # noqa: BLE001
        return ""

    def xy(lon: float, lat: float) -> str:
        east = (lon - minlon) % 360 if g.bbox[0] > g.bbox[2] else lon - minlon
        x = east / g.width * size if g.width else 0.0
        y = size - (lat - minlat) / ((maxlat - minlat) or 1) * size
        return f"{x:.1f},{y:.1f}"

    paths = []
    for layer, colour, width in ((layers.countries, "#222", 0.9), (layers.states, "#666", 0.5)):
        for feature in layer.get("features", []):
            geom = feature.get("geometry") or {}
            polys = geom.get("coordinates", [])
            if geom.get("type") == "Polygon":
                polys = [polys]
            for poly in polys:
                for ring in poly:
                    if len(ring) > 1:
                        d = "M" + " L".join(xy(lon, lat) for lon, lat in ring) + " Z"
                        paths.append(
                            f'<path d="{d}" fill="none" stroke="{colour}" '
                            f'stroke-width="{width}" opacity="0.8"/>'
                        )
    return '<g class="boundaries">' + "".join(paths) + "</g>"


def _legend(scale, size: int, y: int) -> str:
    """The scale's classes as swatches with their bounds (the page's legend, in SVG)."""
    rows = scale.legend()
    w = size / max(1, len(rows))
    parts = [f'<g class="legend" transform="translate(0,{y})">']
    for k, (label, colour) in enumerate(rows):
        short = label.split(" (")[0]
        parts.append(
            f'<rect x="{k * w:.1f}" y="0" width="{w:.1f}" height="10" fill="{colour}" '
            f'stroke="#555" stroke-width="0.3"><title>{escape(label)}</title></rect>'
            f'<text x="{k * w + 2:.1f}" y="21">{escape(short)}</text>'
        )
    parts.append(f'<text x="0" y="34">{escape(scale.unit)}</text></g>')
    return "".join(parts)
