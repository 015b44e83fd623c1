"""Turn released values and result objects into plain JSON (dates, decimals, bytes, NaN...).

DuckDB hands back `datetime.date`, `datetime.datetime`, `datetime.time`, `timedelta`,
`Decimal`, `UUID`, `bytes`, lists and dicts (LIST/STRUCT keys), and pandas/numpy scalars.
`jsonable` maps each to a JSON value: ISO 8601 text for dates and times, an exact number or
its text for decimals, hex text for bytes, None for NaN/±inf/NA/NaT.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from enum import Enum
from uuid import UUID

import numpy as np
import pandas as pd


def jsonable(value):
    """A JSON-serialisable copy of `value` (recursively)."""
    if value is None or isinstance(value, (bool, str)):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, Enum):
        return jsonable(value.value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        if value == value.to_integral_value():
            return int(value)
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else str(value)
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (dt.timedelta, pd.Timedelta)):
        return pd.Timedelta(value).isoformat()
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return None if np.isnat(value) else str(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(jsonable(k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.bool_):
        return bool(value)
    return str(value)  # anything else: its text, never an exception
