"""Points to a frequency matrix over a public bounding box (spec htf.md §1.2-1.3).

A bbox whose MINLON is greater than its MAXLON crosses the antimeridian (Fiji, the Aleutians):
it runs east from MINLON across 180° to MAXLON. Inside the grid, longitudes are then read
"unwrapped" (east of 180° as 180 + …), so columns stay contiguous; exports normalise back to
[-180, 180] (`core.spatial.export`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import InputError

MAX_GRID = 4096


@dataclass(frozen=True)
class Grid:
    """`ny` rows (along latitude, row 0 = south) x `nx` columns over bbox (minlon, minlat, maxlon, maxlat)."""

    ny: int
    nx: int
    bbox: tuple[float, float, float, float]

    def __post_init__(self) -> None:
        for name, n in (("rows", self.ny), ("columns", self.nx)):
            if not 1 <= n <= MAX_GRID:
                raise InputError(f"grid {name} must be between 1 and {MAX_GRID}, got {n}.")
        x0, y0, x1, y1 = self.bbox
        if not all(np.isfinite(self.bbox)):
            raise InputError(
                "the bounding box must be four finite numbers MINLON,MINLAT,MAXLON,MAXLAT."
            )
        if x0 == x1 or y0 >= y1:
            raise InputError(
                f"bounding box needs MINLAT < MAXLAT and MINLON != MAXLON, got lon {x0:g}..{x1:g}, "
                f"lat {y0:g}..{y1:g}. Give it as MINLON,MINLAT,MAXLON,MAXLAT (MINLON > MAXLON "
                "means the box crosses the antimeridian)."
            )
        if x0 > x1 and not (-180 <= x1 < x0 <= 180):
            raise InputError(
                f"a bounding box across the antimeridian needs both longitudes in [-180, 180], "
                f"got {x0:g}..{x1:g}."
            )

    @property
    def wraps(self) -> bool:
        """True when the bbox crosses the antimeridian (MINLON > MAXLON)."""
        return self.bbox[0] > self.bbox[2]

    @property
    def width(self) -> float:
        """East-west extent in degrees (across 180° when the bbox wraps)."""
        x0, _, x1, _ = self.bbox
        return x1 - x0 + (360.0 if self.wraps else 0.0)

    @property
    def east(self) -> float:
        """The east edge, unwrapped: MINLON + width (above 180 when the bbox wraps)."""
        return self.bbox[0] + self.width

    def unwrap(self, lon) -> np.ndarray:
        """Longitudes on the grid's continuous axis: +360 for points east of 180° in a
        wrapping bbox (unchanged otherwise)."""
        lon = np.asarray(lon, dtype=np.float64)
        return np.where(lon < self.bbox[0], lon + 360.0, lon) if self.wraps else lon

    @property
    def cell_width(self) -> float:
        return self.width / self.nx

    @property
    def cell_height(self) -> float:
        return (self.bbox[3] - self.bbox[1]) / self.ny

    def describe(self) -> dict:
        out = {"rows": self.ny, "cols": self.nx, "bbox": list(self.bbox)}
        if self.wraps:
            out["crosses_antimeridian"] = True
        return out


@dataclass(frozen=True)
class Binned:
    """The frequency matrix F (int64, shape (ny, nx)) and how many points fell outside the bbox."""

    F: np.ndarray
    n_used: int
    n_dropped: int


def contains(grid: Grid, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Mask of the points inside the grid's bbox (edges included; across 180° if it wraps)."""
    x0, y0, _, y1 = grid.bbox
    u = grid.unwrap(lon)
    lat = np.asarray(lat, dtype=np.float64)
    return (u >= x0) & (u <= grid.east) & (lat >= y0) & (lat <= y1)


def cells_of(grid: Grid, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of points inside the bbox; a point on the max edge goes to the last cell."""
    x0, y0, _, y1 = grid.bbox
    u = grid.unwrap(lon)
    lat = np.asarray(lat, dtype=np.float64)
    c = np.floor((u - x0) / grid.width * grid.nx).astype(np.int64)
    r = np.floor((lat - y0) / (y1 - y0) * grid.ny).astype(np.int64)
    np.clip(c, 0, grid.nx - 1, out=c)
    np.clip(r, 0, grid.ny - 1, out=r)
    return r, c


def bin_points(
    lon: np.ndarray, lat: np.ndarray, grid: Grid, keep: np.ndarray | None = None
) -> Binned:
    """Count points per cell; points outside the bbox are dropped (`n_dropped`). `keep`, if
    given, is a mask of the points to count at all (e.g. the per-person bound); the others are
    neither used nor counted as dropped."""
    lon = np.asarray(lon, dtype=np.float64)
    lat = np.asarray(lat, dtype=np.float64)
    if keep is not None:
        lon, lat = lon[keep], lat[keep]
    inside = contains(grid, lon, lat)
    r, c = cells_of(grid, lon[inside], lat[inside])
    F = np.bincount(r * grid.nx + c, minlength=grid.ny * grid.nx).reshape(grid.ny, grid.nx)
    return Binned(F=F.astype(np.int64), n_used=int(inside.sum()), n_dropped=int((~inside).sum()))
