"""The location page's edge: widget values -> the typed `LocationParams` (issue 28).

Pure (no Streamlit): the page calls `location_params` once per chosen method with what its
widgets hold, and `core.spatial.service.prepare` does every check, exactly as `dpx release`
does with its arguments (`core.cli.location_run.location_params`). Tests call it directly to
hold the two doors to the same `LocationPrepared`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.spatial.service import HTFOptions, LocationParams


@dataclass(frozen=True)
class Columns:
    """The columns and grid chosen on the page."""

    lat: str
    lon: str
    rows: int  # grid rows = columns
    person: str | None = None  # whose point it is (None: the unit is one point)
    per_person: int | None = None  # at most K points per person


def location_params(
    epsilon: float,
    htf: HTFOptions | Mapping[str, float | int | bool | None],
    method: str,
    columns: Columns,
    bbox: Sequence[float] | None,
    from_data: bool,
) -> LocationParams:
    """One method's `LocationParams` from the page's widgets: the sidebar's ε and HTF options,
    the columns, grid and person column with K, the public box (or, in a seeded demo, the box
    derived from the data: then no box is a parameter)."""
    return LocationParams(
        method=method,
        epsilon=float(epsilon),
        bbox=None if from_data or bbox is None else tuple(float(v) for v in bbox),
        rows=int(columns.rows),
        cols=None,
        lat=columns.lat,
        lon=columns.lon,
        person=columns.person,
        max_points=columns.per_person if columns.person else None,
        htf=htf if isinstance(htf, HTFOptions) else HTFOptions(**dict(htf)),
        bbox_from_data=bool(from_data),
    )


def all_location_params(
    epsilon: float,
    htf: HTFOptions | Mapping[str, float | int | bool | None],
    methods: Sequence[str],
    columns: Columns,
    bbox: Sequence[float] | None,
    from_data: bool,
) -> tuple[LocationParams, ...]:
    """`location_params` for every chosen method (one release each)."""
    return tuple(location_params(epsilon, htf, m, columns, bbox, from_data) for m in methods)
