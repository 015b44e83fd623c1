"""The record a location histogram leaves in the registry: typed, released values and public
parameters only (the leaves and their noisy counts on the public grid, each leaf's noise scale,
the unit, Recommended's choice). Reports, the Releases page and the CLI's analyst output read
it back with `LocationArtefact.from_json`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from core.spatial.export import leaf_noise_std
from core.spatial.grid import Grid
from core.spatial.release import Release


@dataclass(frozen=True)
class GridSpec:
    """The public grid: bbox (minlon, minlat, maxlon, maxlat; minlon > maxlon wraps the
    antimeridian) cut into `rows` × `cols` cells; row 0 is the southern edge."""

    bbox: tuple[float, float, float, float]
    rows: int
    cols: int

    @property
    def width(self) -> float:
        minlon, _, maxlon, _ = self.bbox
        return (maxlon - minlon) % 360 or (360.0 if maxlon != minlon else 0.0)

    def lonlat(self, row: float, col: float) -> tuple[float, float]:
        """The (lon, lat) of a grid corner; a longitude east of 180 is wrapped to the west."""
        minlon, minlat, _, maxlat = self.bbox
        lon = minlon + col * self.width / self.cols
        lat = minlat + row * (maxlat - minlat) / self.rows
        return (lon - 360.0 if lon > 180.0 else lon), lat


@dataclass(frozen=True)
class MethodChoice:
    """Recommended's private choice: the method it picked and why (from noisy features)."""

    chosen: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class LocationArtefact:
    """A location histogram: leaves (row0, row1, col0, col1) with their noisy counts, and the
    Laplace-equivalent noise scale of each leaf where the method states one (None where leaves
    are post-processed combinations, e.g. after consistency)."""

    method: str
    label: str
    unit: str
    grid: GridSpec
    leaves: tuple[tuple[int, int, int, int], ...]
    values: tuple[float, ...]
    leaf_scale: tuple[float, ...] | None = None
    height: int | None = None
    choice: MethodChoice | None = None
    unit_column: str | None = None  # the person column, when the unit is a person
    max_points: int = 1  # K: the points each person may contribute (1 for a point)
    tool: str = field(default="location", init=False)

    def to_json(self) -> dict:
        """`_plain(asdict(self))`, built without deep-copying every leaf (hundreds of thousands
        of leaves: one list per leaf and one pass over the values)."""
        return {
            "method": self.method,
            "label": self.label,
            "unit": self.unit,
            "grid": _plain(asdict(self.grid)),
            "leaves": [list(leaf) for leaf in self.leaves],
            "values": _finite_list(self.values),
            "leaf_scale": None if self.leaf_scale is None else _finite_list(self.leaf_scale),
            "height": self.height,
            "choice": None if self.choice is None else _plain(asdict(self.choice)),
            "unit_column": self.unit_column,
            "max_points": self.max_points,
            "tool": self.tool,
        }

    @classmethod
    def from_json(cls, data: dict) -> LocationArtefact:
        choice = data.get("choice")
        return cls(
            method=data["method"],
            label=data["label"],
            unit=data["unit"],
            grid=GridSpec(tuple(data["grid"]["bbox"]), data["grid"]["rows"], data["grid"]["cols"]),
            leaves=tuple(tuple(x) for x in data["leaves"]),
            values=tuple(data["values"]),
            leaf_scale=None if data.get("leaf_scale") is None else tuple(data["leaf_scale"]),
            height=data.get("height"),
            choice=None
            if choice is None
            else MethodChoice(choice["chosen"], tuple(choice["reasons"])),
            unit_column=data.get("unit_column"),
            max_points=int(data.get("max_points", 1)),
        )


def _finite_list(values) -> list:
    """The floats as a list, non-finite ones as None (as `_plain` does)."""
    arr = np.asarray(values, dtype=np.float64)
    out = arr.tolist()
    if not np.isfinite(arr).all():
        for i in np.flatnonzero(~np.isfinite(arr)).tolist():
            out[i] = None
    return out


def _plain(obj):
    """JSON-ready: tuples as lists, non-finite floats as None (noise never makes them, but a
    record must never hold NaN)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def location_artefact(release: Release, grid: Grid) -> LocationArtefact:
    """The record of a `core.spatial.release.Release` on its public `Grid`: the leaves and their
    noisy counts, each leaf's Laplace-equivalent noise scale where the method states one, the
    unit, and Recommended's choice with its reasons."""
    std = leaf_noise_std(release)
    selection = release.info.get("selection")
    choice = None
    if selection is not None:
        reasons = tuple(release.info.get("reasons") or ()) or (
            f"rule '{selection.rule}': {selection.condition}",
        )
        choice = MethodChoice(release.method, reasons)
    height = release.info.get("height")
    return LocationArtefact(
        method=release.method,
        label=str(release.info.get("label") or release.method),
        unit=release.unit.describe(),
        grid=GridSpec(tuple(float(x) for x in grid.bbox), int(grid.ny), int(grid.nx)),
        leaves=tuple(map(tuple, np.asarray(release.leaves, dtype=np.int64).tolist())),
        values=tuple(np.asarray(release.values, dtype=np.float64).tolist()),
        leaf_scale=None if std is None else tuple(float(v) / math.sqrt(2) for v in std),
        height=None if height is None else int(height),
        choice=choice,
        unit_column=release.unit.column,
        max_points=int(release.unit.max_points),
    )
