"""People, not points: bound each person's points before binning (issue 20, Build 1).

`bound_points_per_person(uid, k, noise)` keeps, for every person (every distinct value of the
person column), at most `k` of their points: a uniformly random subset, chosen independently of
everyone else's data. Then a person changes the frequency matrix by at most k points, and each
builder scales its sensitivities by k (`core.spatial.unit`).

How the subset is drawn, vectorised over all rows (one sort, no per-person Python loop):
every row gets a random key, rows are ordered by (person, key), and a person's first k rows in
that order are kept. In secure mode the keys are fresh uniform 62-bit integers from the OS
(`Noise.integers`): independent across rows, so each person's subset is uniform and independent
of every other person. In seeded (demo) mode a row's key is a keyed hash (SipHash-2-4, pandas'
`hash_array`) of (its person id, its position among that person's rows), under a
16-character key drawn once from the seeded stream: a person's subset then depends only on the
seed and that person's own rows, so two neighbouring tables (one person more or less) keep the
same points for everyone else and consume the same draws of the stream — which is what makes
same-seed differencing tests meaningful. (The key of a row is the SipHash of its person id,
XOR-ed with its position times a 64-bit odd constant and mixed by SplitMix64's finaliser.) Rows without a person id are dropped (a rule about the
row alone; the owner sees how many).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.errors import InputError
from core.privacy import Noise
from core.spatial.grid import Binned, Grid, bin_points, contains
from core.spatial.unit import PersonUnit, Unit

_KEY_ALPHABET = 94  # printable ASCII from '!' (33): 16 characters, about 105 bits of key


def bound_points_per_person(uid, k: int, noise: Noise) -> np.ndarray:
    """Boolean mask over the rows: True for the (at most `k` per person) points kept.

    `uid`: one person id per row (any hashable values; missing ids are never kept)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise InputError(f"the points-per-person bound must be a whole number >= 1, got {k!r}.")
    ids = pd.Series(np.asarray(uid, dtype=object)) if not isinstance(uid, pd.Series) else uid
    ids = ids.reset_index(drop=True)
    codes, uniques = pd.factorize(ids, use_na_sentinel=True)
    n = len(codes)
    keep = np.zeros(n, dtype=bool)
    if n == 0:
        return keep
    keys = _row_keys(ids, codes, uniques, noise)
    order = np.lexsort((np.arange(n), keys, codes))  # by person, then key (row: tie-break)
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    keep[order] = (rank < int(k)) & (sorted_codes >= 0)
    return keep


def _row_keys(ids: pd.Series, codes: np.ndarray, uniques, noise: Noise) -> np.ndarray:
    n = len(codes)
    if noise.is_secure:
        return noise.integers(2**62, size=n).astype(np.uint64)
    key = "".join(chr(33 + int(v)) for v in noise.integers(_KEY_ALPHABET, size=16))
    person = pd.util.hash_array(np.asarray(uniques, dtype=object).astype(str), hash_key=key)
    h = np.where(codes >= 0, person[np.maximum(codes, 0)], np.uint64(0)).astype(np.uint64)
    return _mix(h ^ (_positions(codes).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)))


def _positions(codes: np.ndarray) -> np.ndarray:
    """Each row's position among the rows of its person, in table order."""
    n = len(codes)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    return pos


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a bijection of 64-bit words that spreads every input bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def person_ids(df: pd.DataFrame, column: str) -> pd.Series:
    """The person column of a table (one-line error when it is missing)."""
    columns = [str(c) for c in df.columns]
    if str(column) not in columns:
        raise InputError(
            f"person column '{column}' is not in the table (columns: {', '.join(columns[:12])}"
            f"{', …' if len(columns) > 12 else ''}). Pass the column that says whose point it is."
        )
    return df[df.columns[columns.index(str(column))]].reset_index(drop=True)


def bin_units(lon, lat, uid, grid: Grid, unit: Unit, noise: Noise | None) -> tuple[Binned, int]:
    """The frequency matrix of the points inside `grid`, each person bounded to `unit.k` points
    (`PersonUnit`; `uid` aligned with lon/lat), or every point (`PointUnit`, uid ignored).

    Returns (Binned, n_capped): `n_capped` = points inside the bbox that the per-person bound
    (or a missing person id) left out — like `n_dropped`, for the data owner only. The bound is
    applied to the points inside the bbox, so it never spends a person's K on points that
    would be dropped anyway."""
    lon = np.asarray(lon, dtype=np.float64)
    lat = np.asarray(lat, dtype=np.float64)
    if not isinstance(unit, PersonUnit):
        return bin_points(lon, lat, grid), 0
    if noise is None:
        raise ValueError("bounding points per person needs a noise source (secure or seeded)")
    inside = contains(grid, lon, lat)
    keep = np.zeros(len(lon), dtype=bool)
    ids = pd.Series(np.asarray(uid, dtype=object))
    keep[inside] = bound_points_per_person(ids[inside].reset_index(drop=True), unit.k, noise)
    binned = bin_points(lon, lat, grid, keep=keep)
    return Binned(binned.F, binned.n_used, int((~inside).sum())), int((inside & ~keep).sum())
