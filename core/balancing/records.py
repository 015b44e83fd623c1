"""Record level: check that the sensitive attribute (SA) is categorical, encode it to integer
codes and count its values, all vectorised (no per-record Python loop).

Missing values have ONE spelling everywhere PP shows or writes them: `MISSING_LABEL`
("(missing)"), in the plan, the evaluation, the published CSV and its metadata. Whether they are
dropped or counted as a category of their own is the user's explicit choice (spec 1.1).

No message here names a raw value or states an exact count (an analyst may read it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from core.errors import InputError

MissingPolicy = Literal["error", "drop", "category"]
MISSING_POLICIES = ("error", "drop", "category")
MISSING_LABEL = "(missing)"

# A sensitive attribute with more distinct values than this is not a small-domain attribute:
# PP would make one group per value and a page would list every value.
MAX_SA_VALUES = 1000
# Below this many distinct values a column is categorical whatever its share of distinct values
# (the thesis's Figure 9 has 10 values in 42 rows).
FEW_VALUES = 20


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


def _is_nested(series: pd.Series) -> bool:
    """A list, struct or map column (Parquet nested types, or Python containers in objects)."""
    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa

        t = dtype.pyarrow_dtype
        return bool(
            pa.types.is_list(t)
            or pa.types.is_large_list(t)
            or pa.types.is_fixed_size_list(t)
            or pa.types.is_struct(t)
            or pa.types.is_map(t)
        )
    if not pd.api.types.is_object_dtype(dtype):
        return False
    sample = series.dropna().iloc[:1000]
    return any(isinstance(v, (list, tuple, dict, set, np.ndarray)) for v in sample)


_FIX = "Bin it into a few categories first, or pick another column."


def nested_column_error(name: str) -> InputError:
    return InputError(
        f"column '{name}' holds lists or structs, not single values: PP needs a categorical "
        "sensitive attribute. Pick a column of plain values or flatten it first."
    )


def check_distinct(name: str, distinct: int, present: int) -> None:
    """Refuse a column with too many distinct values (of `present` non-missing values)."""
    if distinct > MAX_SA_VALUES:
        raise InputError(
            f"column '{name}' looks continuous (more than {MAX_SA_VALUES:,} distinct values): PP "
            f"needs a categorical sensitive attribute with few values. {_FIX}"
        )
    if distinct > FEW_VALUES and 2 * distinct > present:
        raise InputError(
            f"column '{name}' looks continuous (more than half of its values are distinct): PP "
            f"needs a categorical sensitive attribute with few values. {_FIX}"
        )


def check_categorical(series: pd.Series) -> None:
    """Refuse, before anything is computed, a sensitive attribute that is not a small categorical
    domain: nested (list/struct) values, more than `MAX_SA_VALUES` distinct values, more than
    half of the non-missing rows distinct, or a float column of non-whole numbers with many
    distinct values (a measurement such as a longitude). One line, no value, no exact count."""
    name = series.name
    if _is_nested(series):
        raise nested_column_error(name)
    try:
        distinct = int(series.nunique(dropna=True))
    except TypeError:  # unhashable values that the sample above did not catch
        raise InputError(
            f"column '{name}' holds values that cannot be compared (lists, dicts or similar): "
            "PP needs a categorical sensitive attribute. Pick a column of plain values."
        ) from None
    check_distinct(name, distinct, int(series.notna().sum()))
    if distinct > 2 * FEW_VALUES and pd.api.types.is_float_dtype(series.dtype):
        values = series.dropna().to_numpy(dtype=np.float64)
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
            raise InputError(
                f"column '{name}' looks continuous (a decimal measurement with many distinct "
                f"values): PP needs a categorical sensitive attribute with few values. {_FIX}"
            )


def value_labels(series: pd.Series) -> np.ndarray:
    """The text label of every value (object array of str), missing as `MISSING_LABEL`: the one
    spelling the plan, the evaluation and the published CSV share. Vectorised: one factorize,
    then `str` of each distinct value only."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    table = np.array([str(u) for u in uniques] + [MISSING_LABEL], dtype=object)
    return table[np.asarray(codes, dtype=np.int64)]  # code -1 (missing) -> the last entry


def encode_sa(series: pd.Series, missing: MissingPolicy = "error") -> EncodedSA:
    """Integer codes for the SA column; missing values need an explicit choice (spec 1.1).

    The column is first checked to be categorical (`check_categorical`)."""
    if len(series) == 0:
        raise InputError("the table is empty: there are no records to balance. Provide data rows.")
    if missing not in MISSING_POLICIES:
        raise InputError(f"unknown missing-value policy {missing!r}: use drop or category.")
    check_categorical(series)
    is_missing = series.isna().to_numpy()
    n_missing = int(is_missing.sum())
    if n_missing and missing == "error":
        raise InputError(
            f"the sensitive attribute '{series.name}' has missing values. Choose to drop those "
            "records or to count 'missing' as a category of its own (CLI: --missing drop|category)."
        )
    codes, labels = label_codes(series, drop_missing=bool(n_missing) and missing == "drop")
    return EncodedSA(
        codes=codes,
        labels=labels,
        n_missing=n_missing,
        missing_policy=missing,
    )


def label_codes(series: pd.Series, drop_missing: bool = False) -> tuple[np.ndarray, list[str]]:
    """(code per row, labels): `pd.factorize(value_labels(series))` — codes in the order the
    labels first appear, distinct raw values that print the same (1 and "1") sharing one label,
    missing values as `MISSING_LABEL` or (`drop_missing`) code -1 — computed from the distinct
    values only, without a label per row."""
    raw, uniques = pd.factorize(series, use_na_sentinel=True)
    raw = np.asarray(raw, dtype=np.int64)
    names = [str(u) for u in uniques]
    first = np.arange(len(names), dtype=np.float64)  # uniques come in order of first appearance
    has_missing = not drop_missing and bool((raw < 0).any())
    if has_missing:  # the missing label's place: where the first missing row falls
        first_missing = int(np.argmax(raw < 0))
        before = int(raw[:first_missing].max()) + 1 if first_missing else 0
        names.append(MISSING_LABEL)
        first = np.append(first, before - 0.5)
    order = np.argsort(first, kind="stable")
    merged, labels = pd.factorize(np.asarray(names, dtype=object)[order])
    code_of = np.empty(len(names), dtype=np.int64)
    code_of[order] = merged
    if has_missing:
        raw = np.where(raw < 0, len(names) - 1, raw)
        return code_of[raw], [str(v) for v in labels]
    out = np.full(raw.shape, -1, dtype=np.int64)
    out[raw >= 0] = code_of[raw[raw >= 0]]
    return out, [str(v) for v in labels]
