"""Column detection and validation of coordinate and attribute columns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.errors import InputError

LAT_NAMES = ("lat", "latitude", "y")
LON_NAMES = ("lon", "lng", "long", "longitude", "x")


def _find(columns: list[str], candidates: tuple[str, ...]) -> str | None:
    lowered = {str(c).strip().lower(): c for c in columns}
    for cand in candidates:
        if cand in lowered:
            return lowered[cand]
    return None


def require_column(df: pd.DataFrame, column: str, role: str = "column") -> None:
    if column not in df.columns:
        shown = ", ".join(map(str, list(df.columns)[:12]))
        raise InputError(f"{role} '{column}' is not in the table. Available columns: {shown}.")


def detect_lat_lon(
    df: pd.DataFrame, lat: str | None = None, lon: str | None = None
) -> tuple[str, str]:
    """Latitude and longitude column names: explicit ones are checked, missing ones guessed by name."""
    cols = list(df.columns)
    lat = lat or _find(cols, LAT_NAMES)
    lon = lon or _find(cols, LON_NAMES)
    if lat is None or lon is None:
        missing = " and ".join(n for n, v in (("latitude", lat), ("longitude", lon)) if v is None)
        raise InputError(
            f"could not find the {missing} column (looked for {', '.join(LAT_NAMES)} / {', '.join(LON_NAMES)}). "
            "Name the columns explicitly (CLI: --lat COL --lon COL)."
        )
    require_column(df, lat, "latitude column")
    require_column(df, lon, "longitude column")
    if lat == lon:
        raise InputError(f"latitude and longitude must be different columns, both are '{lat}'.")
    return lat, lon


@dataclass(frozen=True)
class Points:
    """Validated coordinates (lon = x, lat = y) and how many rows were dropped for NaN."""

    lon: np.ndarray
    lat: np.ndarray
    n_nan_dropped: int


def numeric_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """The column as float64; raises if any non-empty value is not a number."""
    require_column(df, column)
    values = pd.to_numeric(df[column], errors="coerce")
    bad = values.isna() & df[column].notna()
    if bad.any():
        examples = ", ".join(repr(v) for v in df.loc[bad, column].astype(str).head(3))
        raise InputError(
            f"column '{column}' has {int(bad.sum())} non-numeric value(s) (e.g. {examples}). "
            "Fix or remove those rows, or pick another column."
        )
    return values.to_numpy(dtype=float)


def validate_points(df: pd.DataFrame, lat: str, lon: str, drop_nan: bool = False) -> Points:
    """Check coordinates: numeric, no NaN (unless `drop_nan`), latitude and longitude in range."""
    lat_v = numeric_column(df, lat)
    lon_v = numeric_column(df, lon)
    nan = np.isnan(lat_v) | np.isnan(lon_v)
    n_nan = int(nan.sum())
    if n_nan:
        if not drop_nan:
            raise InputError(
                f"{n_nan} row(s) have a missing latitude or longitude. Remove them, or choose to drop them "
                "(CLI: --drop-nan; page: 'drop rows with missing coordinates')."
            )
        lat_v, lon_v = lat_v[~nan], lon_v[~nan]
    if lat_v.size == 0:
        raise InputError("no rows with coordinates are left.")
    for name, v, lo, hi in (("latitude", lat_v, -90, 90), ("longitude", lon_v, -180, 180)):
        bad = (v < lo) | (v > hi)
        if bad.any():
            raise InputError(
                f"{int(bad.sum())} {name} value(s) are outside [{lo}, {hi}] (e.g. {v[bad][0]:g}). "
                "Check that latitude and longitude are not swapped and are in degrees."
            )
    return Points(lon=lon_v, lat=lat_v, n_nan_dropped=n_nan)
