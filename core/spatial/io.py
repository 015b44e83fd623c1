"""Fast reading of point tables for the CLI: only the coordinate columns (and the person column,
when the unit is a person), C/Arrow parsers.

Falls back to `core.data.loading.load_table` (with its specific error messages) whenever the
fast path cannot read the file.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from core.data.loading import load_table
from core.data.validation import detect_lat_lon
from core.errors import InputError


def read_points_table(
    path: str | Path, lat: str | None = None, lon: str | None = None, uid: str | None = None
) -> pd.DataFrame:
    """The table at `path` restricted to its latitude/longitude columns (auto-detected if None)
    and, if given, the person column `uid` (read as text, so ids keep their spelling)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"file not found: {path}. Check the path.")
    with path.open("rb") as fh:
        magic = fh.read(4)
    is_parquet = path.suffix.lower() in (".parquet", ".pq") or magic == b"PAR1"
    try:
        if is_parquet:
            import pyarrow.parquet as pq

            cols = pq.read_schema(path).names
            lat_c, lon_c = detect_lat_lon(pd.DataFrame(columns=cols), lat, lon)
            return pd.read_parquet(path, columns=_wanted(cols, lat_c, lon_c, uid))
        head = pd.read_csv(path, nrows=0)
        lat_c, lon_c = detect_lat_lon(head, lat, lon)
        wanted = _wanted(list(map(str, head.columns)), lat_c, lon_c, uid)
        dtype = {uid: str} if uid is not None else None
        return pd.read_csv(path, usecols=wanted, engine="pyarrow", dtype=dtype)
    except InputError:
        raise
    except Exception:  # unusual delimiter, encoding, garbled file: the careful reader explains
        return load_table(path)


def _wanted(columns: list[str], lat: str, lon: str, uid: str | None) -> list[str]:
    if uid is None:
        return [lat, lon]
    if uid not in columns:
        raise InputError(
            f"person column '{uid}' is not in the table (columns: {', '.join(columns[:12])}). "
            "Pass the column that says whose point it is with --uid."
        )
    return list(dict.fromkeys([lat, lon, uid]))
