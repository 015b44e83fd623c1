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


LAT_DOMAIN = (-90.0, 90.0)
LON_DOMAIN = (-180.0, 180.0)


def coordinate_values(df: pd.DataFrame, column: str) -> np.ndarray:
    """The column as float64, total on its values: a missing or non-numeric value is NaN."""
    require_column(df, column)
    values = pd.to_numeric(df[column], errors="coerce")
    return values.to_numpy(dtype=np.float64, na_value=np.nan)


def usable(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Mask of the points whose two coordinates lie in their declared domain: finite, latitude
    in [-90, 90], longitude in [-180, 180].

    Privacy: the domain is public; a point outside it (missing, non-numeric, NaN, inf, 181°) is
    treated exactly like a point outside the bounding box — left out of the count, never a
    refusal. Refusing on one private value would make the outcome (released or refused) depend
    on one person's row (issue 27)."""
    lon = np.asarray(lon, dtype=np.float64)
    lat = np.asarray(lat, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return (
            (lat >= LAT_DOMAIN[0])
            & (lat <= LAT_DOMAIN[1])
            & (lon >= LON_DOMAIN[0])
            & (lon <= LON_DOMAIN[1])
        )  # NaN compares False: a missing value is never in the domain


@dataclass(frozen=True)
class Points:
    """The usable coordinates (lon = x, lat = y), which rows of the table they are (`kept`), and
    how many rows were left out for a coordinate that is missing, non-numeric, not finite or
    outside [-90, 90] / [-180, 180] (private: for the data owner only)."""

    lon: np.ndarray
    lat: np.ndarray
    kept: np.ndarray
    n_unusable: int


def numeric_column(df: pd.DataFrame, column: str) -> np.ndarray:
    """The column as float64; raises if any non-empty value is not a number (for columns whose
    values are public, e.g. a demo's; coordinates go through `validate_points`, which drops)."""
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


def validate_points(df: pd.DataFrame, lat: str, lon: str) -> Points:
    """The points whose coordinates are usable (`usable`); the others are dropped and counted.

    Total on the values: it fails only when a named column is not in the table (public). A
    value outside its declared domain is a missing value, never a refusal (issue 27)."""
    lat_v = coordinate_values(df, lat)
    lon_v = coordinate_values(df, lon)
    kept = usable(lon_v, lat_v)
    return Points(
        lon=lon_v[kept], lat=lat_v[kept], kept=kept, n_unusable=int(kept.size - kept.sum())
    )
