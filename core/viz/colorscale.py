"""The colour scale of a location release: noisy density per area, fitted to the release itself.

Pure functions (no streamlit, no folium): the page's map and the HTML reports colour leaves the
same way. A leaf's colour comes from its released density — noisy count / area in km² — on a
quantile scale fitted to that release's own released densities:

* leaves whose noisy count is ≤ 0 (noise over empty space) get one neutral class;
* the positive densities are cut at their 50th, 75th, 90th, 97th, 99th and 99.9th percentiles
  (over leaves; each break rounded to two significant digits for the legend), giving seven
  classes from pale yellow to dark red (ColorBrewer YlOrRd, colour-blind safe).

Why quantiles with a heavy upper tail: densities of real point sets span four to six orders of
magnitude (one taxi stand holds what a suburb does), so a linear or a max-anchored log scale
puts almost every leaf in its first colour — the "pale box" of issue 20. Quantiles spread the
colours over the leaves whatever the grid size, N or ε, and the top breaks (97 / 99 / 99.9 %)
keep the hot spots apart from the merely busy. The scale reads released values only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

QUANTILES = (0.5, 0.75, 0.9, 0.97, 0.99, 0.999)
PALETTE = ("#ffffb2", "#fed976", "#feb24c", "#fd8d3c", "#fc4e2a", "#e31a1c", "#b10026")
EMPTY_COLOR = "#d9d9d9"
EMPTY_OPACITY = 0.15
OPACITIES = (0.45, 0.55, 0.62, 0.7, 0.76, 0.82, 0.88)
UNIT = "noisy points per km²"


@dataclass(frozen=True)
class DensityScale:
    """Classes of leaf density: class -1 for ≤ 0, then one class per colour; `breaks[k]` is the
    upper bound of class k (the last class is open)."""

    breaks: tuple[float, ...]
    colors: tuple[str, ...]
    opacities: tuple[float, ...]
    unit: str = UNIT

    def classes(self, density) -> np.ndarray:
        d = np.asarray(density, dtype=np.float64)
        k = np.searchsorted(np.asarray(self.breaks), d, side="left")
        return np.where(d > 0, k, -1)

    def colors_of(self, density) -> list[str]:
        return [EMPTY_COLOR if k < 0 else self.colors[k] for k in self.classes(density).tolist()]

    def opacities_of(self, density) -> list[float]:
        return [EMPTY_OPACITY if k < 0 else self.opacities[k] for k in self.classes(density)]

    def legend(self) -> list[tuple[str, str]]:
        """(label, colour) rows from the lowest class up, the ≤ 0 class first."""
        rows = [("≤ 0 (noise over empty space)", EMPTY_COLOR)]
        lower = 0.0
        for k, color in enumerate(self.colors):
            if k < len(self.breaks):
                rows.append((f"{_fmt(lower)} – {_fmt(self.breaks[k])}", color))
                lower = self.breaks[k]
            else:
                rows.append((f"> {_fmt(lower)}", color))
        return rows


def density_scale(densities) -> DensityScale:
    """The scale fitted to a release's densities (quantiles of the positive ones)."""
    d = np.asarray(densities, dtype=np.float64)
    positive = d[np.isfinite(d) & (d > 0)]
    if positive.size == 0:
        return DensityScale((), PALETTE[:1], OPACITIES[:1])
    breaks: list[float] = []
    for q in np.quantile(positive, QUANTILES).tolist():
        b = _round_sig(q)
        if b > 0 and (not breaks or b > breaks[-1]) and b < positive.max():
            breaks.append(b)
    n = len(breaks) + 1
    # spread the palette over the classes actually present (few leaves: fewer, distinct colours)
    pick = np.linspace(0, len(PALETTE) - 1, n).round().astype(int).tolist()
    return DensityScale(
        tuple(breaks), tuple(PALETTE[i] for i in pick), tuple(OPACITIES[i] for i in pick)
    )


def leaf_areas_km2(leaves: np.ndarray, bbox, ny: int, nx: int) -> np.ndarray:
    """Area of each leaf (r0, r1, c0, c1) in km², on the sphere between its own latitudes."""
    x0, y0, x1, y1 = (float(v) for v in bbox)
    width = (x1 - x0) % 360.0 or 360.0  # a bbox with minlon > maxlon crosses the antimeridian
    L = np.asarray(leaves, dtype=np.float64).reshape(-1, 4)
    lat0 = np.radians(y0 + L[:, 0] * (y1 - y0) / ny)
    lat1 = np.radians(y0 + L[:, 1] * (y1 - y0) / ny)
    dlon = np.radians((L[:, 3] - L[:, 2]) * width / nx)
    r = 6371.0088  # mean Earth radius, km
    return r * r * dlon * np.abs(np.sin(lat1) - np.sin(lat0))


def leaf_density(values, leaves, bbox, ny: int, nx: int) -> np.ndarray:
    """Released density of each leaf: noisy count / area (km²)."""
    return np.asarray(values, dtype=np.float64) / leaf_areas_km2(leaves, bbox, ny, nx)


def release_colors(release, grid) -> tuple[list[str], list[float], DensityScale]:
    """(colour per leaf, fill opacity per leaf, the scale): what a map or a report draws."""
    dens = leaf_density(release.values, release.leaves, grid.bbox, grid.ny, grid.nx)
    scale = density_scale(dens)
    return scale.colors_of(dens), scale.opacities_of(dens), scale


def legend_html(scale: DensityScale, title: str = "") -> str:
    """A small HTML legend (inline styles only) for the scale."""
    head = f"<b>{title}</b><br>" if title else ""
    rows = "".join(
        f'<div><span style="display:inline-block;width:14px;height:10px;margin-right:5px;'
        f'background:{c};border:1px solid #999"></span>{label}</div>'
        for label, c in reversed(scale.legend())
    )
    return (
        f"{head}<span>{scale.unit} (quantile classes of this release)</span>{rows}"
        "<span style='color:#555'>released values; negatives are noise</span>"
    )


def _round_sig(x: float, digits: int = 2) -> float:
    if x <= 0 or not math.isfinite(x):
        return 0.0
    return float(f"{x:.{digits}g}")


def _fmt(x: float) -> str:
    """Plain numbers for the legend: 0, 0.034, 2.5, 220, 4,900 (never 2.2e+02)."""
    if x == 0:
        return "0"
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 1:
        return f"{x:.3g}"
    return f"{x:.2g}" if x >= 1e-4 else f"{x:.1e}"
