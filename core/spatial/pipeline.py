"""From a table of points to the frequency matrix, with the bad-input checks of issue 5.

The bounding box is public: given by the user, a documented public default, or — only in
seeded demo mode — derived from the data and then labelled as such in every output (§1.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.data.validation import detect_lat_lon, validate_points
from core.errors import InputError
from core.privacy import Noise
from core.spatial.grid import Grid
from core.spatial.persons import bin_units, person_ids
from core.spatial.unit import POINT, Unit

MIN_POINTS = 10
NO_USABLE_POINTS = (
    "no row has a usable latitude and longitude (each is missing, not a number, or outside "
    "[-90, 90] / [-180, 180]). Fix: check the coordinate columns (--lat/--lon) and that they "
    "hold degrees."
)
DEFAULT_GRID = 1024


@dataclass(frozen=True)
class Prepared:
    """The binned data: F, the grid, the unit it was bounded for, and data-owner diagnostics
    (never part of a release)."""

    F: np.ndarray
    grid: Grid
    n_used: int
    n_dropped: int  # outside the bbox + unusable coordinates: private, data owner only
    bbox_from_data: bool
    lat_col: str
    lon_col: str
    unit: Unit = POINT
    n_capped: int = 0  # left out by the per-person bound (or a missing id): owner only


def parse_bbox(text: str) -> tuple[float, float, float, float]:
    parts = [p.strip() for p in str(text).split(",")]
    try:
        vals = tuple(float(p) for p in parts)
    except ValueError:
        vals = ()
    if len(vals) != 4:
        raise InputError(
            f"could not read the bounding box '{text}': give four numbers MINLON,MINLAT,MAXLON,MAXLAT "
            "(e.g. --bbox=-118.6,33.7,-117.9,34.4)."
        )
    return vals  # type: ignore[return-value]


def derive_bbox(lon: np.ndarray, lat: np.ndarray) -> tuple[float, float, float, float]:
    """Demo mode only: data min/max padded by 1e-9 of the span (spec §1.2)."""
    x0, x1, y0, y1 = float(lon.min()), float(lon.max()), float(lat.min()), float(lat.max())
    px, py = (x1 - x0) * 1e-9, (y1 - y0) * 1e-9
    return (x0 - px, y0 - py, x1 + px, y1 + py)


def grid_for(
    extent: tuple[float, float, float, float] | None,
    bbox: tuple[float, float, float, float] | None,
    rows: int,
    cols: int | None,
    allow_data_bbox: bool,
    total: bool = False,
) -> tuple[Grid, bool]:
    """The grid over the public `bbox` — or, in a labelled demo run only, over a box derived
    from the points' `extent` (min lon, max lon, min lat, max lat) — and whether it was
    derived. Refuses identical points and a missing bbox outside demo mode. Shared by every
    reader (in memory, DuckDB scan, Spark) so that they refuse and derive alike. `total`: the
    grid from the public bbox alone (required), whatever the points are (`prepare`)."""
    cells = (int(rows), int(cols if cols is not None else rows))
    if total:
        if bbox is None:
            raise InputError(
                "no bounding box given. The bbox is a public parameter and must not come from "
                "the private points: pass --bbox MINLON,MINLAT,MAXLON,MAXLAT or --region NAME."
            )
        return Grid(*cells, tuple(float(v) for v in bbox)), False
    x0, x1, y0, y1 = (float(v) for v in extent)
    if x0 == x1 and y0 == y1:
        raise InputError(
            "all points are identical; a location histogram of one location shows nothing. "
            "Check the coordinate columns."
        )
    from_data = bbox is None
    if from_data:
        if not allow_data_bbox:
            raise InputError(
                "no bounding box given. The bbox is a public parameter and must not come from the "
                "private points: pass --bbox MINLON,MINLAT,MAXLON,MAXLAT (or use --seed for a "
                "labelled demo run that derives it from the data)."
            )
        bbox = derive_bbox(np.array([x0, x1]), np.array([y0, y1]))
    return Grid(*cells, tuple(float(v) for v in bbox)), from_data


def check_usable(n_usable: int) -> None:
    """The owner's refusal of a table with (almost) no usable coordinates (exact counts)."""
    if n_usable == 0:
        raise InputError(NO_USABLE_POINTS)
    if n_usable < MIN_POINTS:
        raise InputError(
            f"only {n_usable} point(s) with coordinates; at least {MIN_POINTS} are needed for a "
            "meaningful histogram."
        )


def check_inside(n_used: int, n_capped: int, n_outside: int, grid: Grid) -> None:
    """The owner's refusal of a bbox with (almost) no points inside it (exact counts)."""
    if n_used == 0 and n_capped == 0:
        raise InputError(
            f"all {n_outside} points are outside the bounding box {list(grid.bbox)}. "
            "Check the bbox order MINLON,MINLAT,MAXLON,MAXLAT and that lat/lon are not swapped."
        )
    if n_used < MIN_POINTS:
        raise InputError(
            f"only {n_used} point(s) fall inside the bounding box; at least {MIN_POINTS} are "
            "needed. Widen the bbox."
        )


def prepare(
    df: pd.DataFrame,
    lat: str | None = None,
    lon: str | None = None,
    bbox: tuple[float, float, float, float] | None = None,
    rows: int = DEFAULT_GRID,
    cols: int | None = None,
    allow_data_bbox: bool = False,
    unit: Unit = POINT,
    noise: Noise | None = None,
    total: bool = False,
) -> Prepared:
    """Validate coordinates and bin them; raises InputError with a fix for every bad input.

    A coordinate that is missing, not a number, not finite or outside [-90, 90] / [-180, 180]
    is dropped like a point outside the bbox, never refused (issue 27). The data owner's run
    then refuses, with exact counts, a table with too few usable points, identical points or
    none inside the bbox. `total=True` (an analyst's run: the outcome must not depend on one
    private row) makes none of those refusals: it needs the public bbox and bins whatever is
    inside it, possibly nothing (a DP histogram of an empty region is still a valid release).

    With a `PersonUnit`, each person (value of `unit.column`) keeps at most `unit.k` of their
    points inside the bbox, drawn with `noise` (`core.spatial.persons`); F then has
    per-person L1 sensitivity k, which every builder is told through `Prepared.unit`."""
    lat_col, lon_col = detect_lat_lon(df, lat, lon)
    uid = None
    if unit.column is not None:
        uid = person_ids(df, unit.column)
    pts = validate_points(df, lat_col, lon_col)  # unusable coordinates: dropped, never refused
    if uid is not None:  # align the ids with the points that kept their coordinates
        uid = uid[pts.kept].reset_index(drop=True)
    if not total:
        check_usable(pts.lon.size)
    extent = (pts.lon.min(), pts.lon.max(), pts.lat.min(), pts.lat.max()) if pts.lon.size else None
    grid, from_data = grid_for(extent, bbox, rows, cols, allow_data_bbox, total)
    binned, n_capped = bin_units(pts.lon, pts.lat, uid, grid, unit, noise)
    if not total:
        check_inside(binned.n_used, n_capped, binned.n_dropped, grid)
    return Prepared(
        F=binned.F,
        grid=grid,
        n_used=binned.n_used,
        n_dropped=binned.n_dropped + pts.n_unusable,
        bbox_from_data=from_data,
        lat_col=lat_col,
        lon_col=lon_col,
        unit=unit,
        n_capped=n_capped,
    )
