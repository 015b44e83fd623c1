"""The location-histogram sections of a report: the guarantee for the dataset's declared unit,
accuracy read from the typed mechanism objects recorded with the release (each leaf's noise
scale and 95 % interval, one plain sentence beside the map, Recommended's choice and its
reasons), and the map (boundaries, place names, coordinates, legend) with a table of leaves in
longitude/latitude."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from core.privacy import DiscreteLaplace, Laplace, LatticeLaplace
from core.privacy.accuracy import laplace_half_width
from core.registry import Release
from core.reports.common import DP_LIMITS, does_not_mean, dp_claim, table
from core.reports.mapsvg import leaves_map
from core.spatial.record import LocationArtefact

ROW_IS_UNIT = "one row (each row is one person)"
COMBINED_SCALE = "post-processed (see Accuracy)"
COMBINED_INTERVAL = "not stated per leaf (derived from several measurements)"
_ADDITIVE = (DiscreteLaplace, Laplace, LatticeLaplace)


def unit_words(art: LocationArtefact, dataset=None) -> str:
    """The unit in words, following the dataset's declared unit where one is registered: a
    dataset registered with --row-is-unit protects one row, each row being one person."""
    if art.unit_column is None and dataset is not None and dataset.row_is_unit:
        return ROW_IS_UNIT
    return art.unit


def guarantee(release: Release, art: LocationArtefact, dataset=None) -> str:
    unit = unit_words(art, dataset)
    limits = list(DP_LIMITS)
    if unit == ROW_IS_UNIT:
        limits.append(
            "The data owner declared that each row is one person (--row-is-unit): one person's "
            "data is one point, protected at ε. If a person can have several rows, that "
            "declaration is wrong and such a person is protected at k × ε for k rows."
        )
    elif art.unit_column is None:
        limits.append(
            "The unit is one point: a person with k points in the data is protected at k × ε. "
            "Give a person column (and a bound on points per person) to protect people."
        )
    else:
        limits.append(
            "Points beyond a person's bound were left out at random before binning; the counts "
            "describe the points kept."
        )
    return dp_claim(release, unit) + does_not_mean(release, limits)


# -- accuracy from the recorded mechanisms ------------------------------------------------------
@dataclass(frozen=True)
class LeafNoise:
    """The noise in one leaf's released count, as the mechanism that drew it states it."""

    scale: float  # b
    half_width: float  # 95 %: |noise| <= half_width with probability >= 0.95
    kind: str  # the mechanism's kind ("discrete Laplace")
    label: str  # what the mechanism measured; "" when no recorded mechanism matched


def _count_mechanisms(release: Release, art: LocationArtefact) -> list:
    """The additive mechanisms recorded with the release, counts (discrete Laplace) first.
    After Recommended's choice, those of the chosen method (labelled "<method>: ..."), not the
    noisy features the choice was made from."""
    ms = [m for m in release.mechanisms if isinstance(m, _ADDITIVE)]
    if art.choice is not None:
        chosen = [m for m in ms if m.label.startswith(f"{art.choice.chosen}:")]
        ms = chosen or ms
    return sorted(ms, key=lambda m: not isinstance(m, DiscreteLaplace))


def leaf_noise(release: Release, art: LocationArtefact) -> list[LeafNoise] | None:
    """Each leaf's noise from the mechanism that drew its count: the recorded mechanism whose
    scale is the leaf's stated scale (counts first). None when the method's leaves combine
    several measurements (no single scale per leaf). A leaf scale that matches no recorded
    mechanism (a registry row of an older version) gets the continuous Laplace half-width
    b ln 20 of its stated scale, labelled as such."""
    if art.leaf_scale is None:
        return None
    candidates = _count_mechanisms(release, art)
    found: dict[float, LeafNoise] = {}
    out = []
    for b in art.leaf_scale:
        if b not in found:
            m = next((m for m in candidates if math.isclose(m.scale, b, rel_tol=1e-6)), None)
            if m is None:
                found[b] = LeafNoise(float(b), float(laplace_half_width(b, 0.95)), "Laplace", "")
            else:
                found[b] = LeafNoise(
                    float(m.scale), float(m.half_width(0.95)), m.kind.value, m.label
                )
        out.append(found[b])
    return out


def num(x: float, sep: str = "") -> str:
    """A number for a sentence or a table: whole numbers plainly, others to 4 significant
    digits (never in exponent form below 10^15); `sep=","` separates thousands (sentences
    only: an interval "[2331, 2351]" keeps its comma for the bounds)."""
    x = float(x)
    if math.isfinite(x) and abs(x) < 1e15 and (x == round(x) or abs(x) >= 1000):
        return f"{round(x):{sep}d}" if sep else f"{round(x):d}"
    return f"{x:.4g}"


def _span(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    if math.isclose(lo, hi, rel_tol=1e-9):
        return num(lo, ",")
    return f"{num(lo, ',')} to {num(hi, ',')}"


def accuracy_sentence(release: Release, art: LocationArtefact) -> str:
    """The release's accuracy in one plain sentence (HTML), from the recorded mechanisms."""
    of_what = (
        f"of the true count of points kept (at most {art.max_points} per person)"
        if art.unit_column
        else "of the true count"
    )
    noise = leaf_noise(release, art)
    if noise:
        kinds = ", ".join(dict.fromkeys(n.kind for n in noise))
        hws, bs = [n.half_width for n in noise], [n.scale for n in noise]
        several = not math.isclose(min(hws), max(hws))
        hw = "±" + _span(hws).replace(" to ", " to ±")
        return (
            f"Each leaf's count is within <b>{hw}</b> {of_what} 95 % of the time"
            + (", depending on the leaf" if several else "")
            + f" ({escape(kinds)} noise, scale b = {_span(bs)}"
            + ("; the leaf table gives each leaf's" if several else "")
            + ")."
        )
    additive = _count_mechanisms(release, art)
    measured = [m for m in additive if isinstance(m, DiscreteLaplace)] or additive
    if not measured:
        return (
            "No noise mechanism is recorded with this release, so no accuracy figure can be "
            "stated for its counts."
        )
    hws = [float(m.half_width(0.95)) for m in measured]
    kinds = ", ".join(dict.fromkeys(m.kind.value for m in measured))
    return (
        "Each leaf's count is derived from the noisy measurements by post-processing (this "
        "method combines or spreads them, e.g. for consistency), so no single ± figure is "
        "stated per leaf. The count measurements it derives them from are each within "
        f"<b>±{_span(hws).replace(' to ', ' to ±')}</b> of their true "
        f"value 95 % of the time ({escape(kinds)} noise, scale b = "
        f"{_span([m.scale for m in measured])}); see the mechanisms table."
    )


def leaf_rows(release: Release, art: LocationArtefact) -> list[list]:
    """One row per leaf: its lon/lat bounds, noisy count, noise scale and 95 % interval (from
    the mechanism that drew it), or what is stated instead when leaves combine measurements."""
    rows = []
    noise = leaf_noise(release, art)
    for k, ((r0, r1, c0, c1), v) in enumerate(zip(art.leaves, art.values, strict=True)):
        w_lon, s_lat = art.grid.lonlat(r0, c0)
        e_lon, n_lat = art.grid.lonlat(r1, c1)
        if noise is None:
            scale, interval = COMBINED_SCALE, COMBINED_INTERVAL
        else:
            n = noise[k]
            scale = num(n.scale)
            interval = f"[{num(v - n.half_width)}, {num(v + n.half_width)}]"
        rows.append(
            [round(w_lon, 5), round(s_lat, 5), round(e_lon, 5), round(n_lat, 5), v, scale,
             interval]
        )  # fmt: skip
    return rows


def accuracy(release: Release, art: LocationArtefact) -> str:
    parts = []
    if art.choice is not None:
        reasons = "".join(f"<li>{escape(r)}</li>" for r in art.choice.reasons)
        parts.append(
            f"<p><b>Method choice</b>: Recommended chose <b>{escape(art.choice.chosen)}</b> from "
            f"noisy features (their cost is part of this release's ε):</p><ul>{reasons}</ul>"
        )
    parts.append(f'<p class="accuracy-sentence">{accuracy_sentence(release, art)}</p>')
    if art.leaf_scale is None:
        parts.append(
            "<p>The leaf table states no interval per leaf for this method: a leaf's value is "
            "derived from several measurements, whose scales and 95 % half-widths the mechanisms "
            "table gives.</p>"
        )
    else:
        parts.append(
            "<p>Each leaf's scale and 95 % interval in the leaf table are those of the "
            "mechanism that drew its count (the mechanisms table). Intervals describe the "
            "added noise only.</p>"
        )
    return "".join(parts)


def figures(release: Release, art: LocationArtefact) -> str:
    g = art.grid
    noise = leaf_noise(release, art)
    half_widths = None if noise is None else [n.half_width for n in noise]
    intro = (
        f"<p>{escape(art.label)}: {len(art.leaves)} leaves on a {g.rows} × {g.cols} grid over the "
        f"public bounding box {', '.join(f'{x:g}' for x in g.bbox)} (west, south, east, north)"
        + (f", tree height {art.height}" if art.height is not None else "")
        + ".</p>"
    )
    note = (
        '<aside class="map-note"><p><b>How accurate?</b> '
        f"{accuracy_sentence(release, art)}</p><p>Colours: noisy points per km² of each leaf, "
        "in classes fitted to this release's own released values (grey: a count of 0 or below, "
        "which is noise over empty space).</p></aside>"
    )
    return (
        intro
        + '<div class="map-row"><div class="map">'
        + leaves_map(art, "Released leaves: noisy points per km²", half_widths)
        + "</div>"
        + note
        + "</div>"
        + table(
            ["west", "south", "east", "north", "noisy count", "noise scale b", "95% interval"],
            leaf_rows(release, art),
            "result",
        )
    )
