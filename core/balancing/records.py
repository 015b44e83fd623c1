"""Record level: encode the SA column to integer codes, count, and give every record its
sub-table id (spec section 2.6), all vectorised - no per-record Python loop.

Records of value x are consumed in original row order, in group order: the first group that
contains x takes x's first records, and so on. Optionally a seeded permutation (via `Noise`)
decides which records of a value go where; counts are identical either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from core.errors import InputError
from core.privacy import Noise

MissingPolicy = Literal["error", "drop", "category"]
MISSING_LABEL = "(missing)"


@dataclass(frozen=True)
class EncodedSA:
    codes: np.ndarray  # int64 per record; -1 for a dropped (missing) record
    labels: list[str]  # code -> value label
    n_missing: int
    missing_policy: str

    def counts(self) -> dict[str, int]:
        """value -> count over the kept records (bincount on the codes)."""
        kept = self.codes[self.codes >= 0]
        bins = np.bincount(kept, minlength=len(self.labels))
        return {self.labels[i]: int(c) for i, c in enumerate(bins) if c > 0}


def encode_sa(series: pd.Series, missing: MissingPolicy = "error") -> EncodedSA:
    """Integer codes for the SA column; missing values need an explicit choice (spec 1.1)."""
    if len(series) == 0:
        raise InputError("the table is empty: there are no records to balance. Provide data rows.")
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    codes = np.asarray(codes, dtype=np.int64)
    labels = [str(u) for u in uniques]
    n_missing = int((codes < 0).sum())
    if n_missing:
        if missing == "error":
            raise InputError(
                f"the sensitive attribute '{series.name}' has {n_missing} missing value(s). Choose "
                "to drop those records or to treat 'missing' as a category of its own "
                "(CLI: --missing drop|category)."
            )
        if missing == "category":
            labels.append(MISSING_LABEL)
            codes = np.where(codes < 0, len(labels) - 1, codes)
        elif missing != "drop":
            raise InputError(f"unknown missing-value policy {missing!r}: use drop or category.")
    # distinct raw values may print the same (1 and "1"): merge them under one label
    unique_labels = list(dict.fromkeys(labels))
    if len(unique_labels) != len(labels):
        remap = np.array([unique_labels.index(lab) for lab in labels], dtype=np.int64)
        codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
        labels = unique_labels
    return EncodedSA(codes=codes, labels=labels, n_missing=n_missing, missing_policy=missing)


def _sort_codes(codes: np.ndarray, n_labels: int) -> np.ndarray:
    """Stable argsort of the codes; small integer types let numpy use its O(n) radix sort."""
    if n_labels + 1 < 2**15:
        return np.argsort(codes.astype(np.int16), kind="stable")
    return np.argsort(codes, kind="stable")


def assign_records(
    codes: np.ndarray,
    labels: Sequence[str],
    groups: Sequence[dict[str, int]],
    noise: Noise | None = None,
) -> np.ndarray:
    """Group index (0-based) per record, -1 for dropped records (code -1).

    `noise=None`: original row order within each value; otherwise a random permutation from
    `noise` decides which records of a value go to which group.
    """
    codes = np.asarray(codes, dtype=np.int64)
    index = {lab: i for i, lab in enumerate(labels)}
    entry_code, entry_group, entry_count = [], [], []
    for g, group in enumerate(groups):
        for value, count in group.items():
            entry_code.append(index[value])
            entry_group.append(g)
            entry_count.append(count)
    entry_code = np.asarray(entry_code, dtype=np.int64)
    entry_group = np.asarray(entry_group, dtype=np.int64)
    entry_count = np.asarray(entry_count, dtype=np.int64)
    # entries sorted by (value, group): concatenated, they tile the records sorted by value
    by = np.lexsort((entry_group, entry_code))
    per_record_group = np.repeat(entry_group[by], entry_count[by])
    kept = codes >= 0
    n_dropped = int((~kept).sum())
    if per_record_group.size != codes.size - n_dropped:
        raise ValueError("group counts do not add up to the number of records")
    if noise is None:
        order = _sort_codes(codes, len(labels))
    else:
        perm = noise.permutation(codes.size)
        order = perm[_sort_codes(codes[perm], len(labels))]
    out = np.full(codes.size, -1, dtype=np.int64)
    out[order[n_dropped:]] = per_record_group  # dropped records (-1) sort first
    return out


def group_counts(
    codes: np.ndarray, assignment: np.ndarray, labels: Sequence[str], n_groups: int
) -> list[dict[str, int]]:
    """Per group: value -> count, recomputed from a record-level assignment (for checks)."""
    kept = assignment >= 0
    flat = assignment[kept] * len(labels) + codes[kept]
    keys, counts = np.unique(flat, return_counts=True)
    out: list[dict[str, int]] = [{} for _ in range(n_groups)]
    for key, count in zip(keys.tolist(), counts.tolist(), strict=True):
        out[key // len(labels)][labels[key % len(labels)]] = count
    return out
