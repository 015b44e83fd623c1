"""A canonical row order for the cross-user table, whatever engine produced it.

Engines return aggregate rows in arbitrary order (hash tables, threads, Spark partitions), and
the release draws noise row by row. Sorting the partitions by their keys first makes a seeded
run reproducible and the same on DuckDB and Spark. The order is public-key order only; it does
not change any mechanism or its privacy guarantee.
"""

from __future__ import annotations

import math

import pandas as pd


def _sortable(value) -> tuple:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return (0,)
    return (1, value)


def in_key_order(cross: pd.DataFrame, n_keys: int) -> pd.DataFrame:
    """`cross` with rows sorted by k0, k1, ... (NULL first); unchanged without keys."""
    if n_keys == 0 or len(cross) < 2:
        return cross
    keys = [cross[f"k{i}"].tolist() for i in range(n_keys)]
    order = sorted(range(len(cross)), key=lambda r: tuple(_sortable(k[r]) for k in keys))
    return cross.iloc[order].reset_index(drop=True)
