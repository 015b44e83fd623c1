"""The location-histogram sections of a report: the guarantee for its unit, accuracy from public
parameters (each leaf's noise scale and 95 % interval, Recommended's choice and its reasons),
and the map (boundaries, legend) with a table of leaves in longitude/latitude."""

from __future__ import annotations

import math
from html import escape

from core.registry import Release
from core.reports.common import DP_LIMITS, does_not_mean, dp_claim, table
from core.reports.svg import leaves_map
from core.spatial.record import LocationArtefact

LN20 = math.log(20.0)  # a Laplace(b) draw is within ± b ln 20 with probability 95 %


def guarantee(release: Release, art: LocationArtefact) -> str:
    limits = list(DP_LIMITS)
    if art.unit.startswith("one point"):
        limits.append(
            "The unit is one point: a person with k points in the data is protected at k × ε. "
            "Give a person column (and a bound on points per person) to protect people."
        )
    else:
        limits.append(
            "Points beyond a person's bound were left out at random before binning; the counts "
            "describe the points kept."
        )
    return dp_claim(release, art.unit) + does_not_mean(release, limits)


def leaf_rows(art: LocationArtefact) -> list[list]:
    """One row per leaf: its lon/lat bounds, noisy count, noise scale and 95 % interval."""
    rows = []
    scales = art.leaf_scale or (None,) * len(art.leaves)
    for (r0, r1, c0, c1), v, b in zip(art.leaves, art.values, scales, strict=True):
        w_lon, s_lat = art.grid.lonlat(r0, c0)
        e_lon, n_lat = art.grid.lonlat(r1, c1)
        half = None if b is None else b * LN20
        rows.append(
            [
                round(w_lon, 5),
                round(s_lat, 5),
                round(e_lon, 5),
                round(n_lat, 5),
                v,
                b,
                None if half is None else f"[{v - half:.4g}, {v + half:.4g}]",
            ]
        )
    return rows


def accuracy(release: Release, art: LocationArtefact) -> str:
    parts = []
    if art.choice is not None:
        reasons = "".join(f"<li>{escape(r)}</li>" for r in art.choice.reasons)
        parts.append(
            f"<p><b>Method choice</b>: Recommended chose <b>{escape(art.choice.chosen)}</b> from "
            f"noisy features (their cost is part of this release's ε):</p><ul>{reasons}</ul>"
        )
    if art.leaf_scale is None:
        parts.append(
            "<p>This method post-processes its noisy measurements (a leaf's value combines "
            "several of them), so no single noise scale per leaf is stated; the mechanisms "
            "table gives the scale of every measurement.</p>"
        )
    else:
        lo, hi = min(art.leaf_scale), max(art.leaf_scale)
        span = f"{lo:.4g}" if math.isclose(lo, hi) else f"{lo:.4g} to {hi:.4g}"
        parts.append(
            f"<p>Each leaf's noisy count carries Laplace-type noise of scale b ({span} here); "
            "95 % of such noise falls within ± b·ln 20 ≈ 3 b. The leaf table lists each "
            "leaf's scale and interval.</p>"
        )
    return "".join(parts)


def figures(release: Release, art: LocationArtefact) -> str:
    g = art.grid
    intro = (
        f"<p>{escape(art.label)}: {len(art.leaves)} leaves on a {g.rows} × {g.cols} grid over the "
        f"public bounding box {', '.join(f'{x:g}' for x in g.bbox)} (west, south, east, north)"
        + (f", tree height {art.height}" if art.height is not None else "")
        + ".</p>"
    )
    rows = leaf_rows(art)
    return (
        intro
        + leaves_map(
            art, "Released leaves: noisy points per km² (quantile classes of this release)"
        )
        + table(
            ["west", "south", "east", "north", "noisy count", "noise scale b", "95% interval"],
            rows,
            "result",
        )
    )
