"""Record level: the SA is checked to be categorical, encoded and counted; missing values have
one spelling, "(missing)"."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.balancing.records import MISSING_LABEL, encode_sa, value_labels
from core.errors import InputError
from tests.balancing.pp_helpers import FIG9


def fig9_records(seed: int = 3) -> pd.Series:
    values = np.repeat(list(FIG9), list(FIG9.values()))
    return pd.Series(np.random.default_rng(seed).permutation(values), name="sa")


def test_missing_values_need_a_choice():
    sa = pd.Series(["a", None, "b", "a", np.nan, "c"], name="disease")
    with pytest.raises(InputError, match="has missing values"):
        encode_sa(sa)
    dropped = encode_sa(sa, missing="drop")
    assert dropped.counts() == {"a": 2, "b": 1, "c": 1} and dropped.n_missing == 2
    cat = encode_sa(sa, missing="category")
    assert cat.counts()[MISSING_LABEL] == 2


def test_numeric_labels_are_strings():
    enc = encode_sa(pd.Series([1, 2, 2, 10, 10, 10], name="sa"))
    assert enc.counts() == {"1": 1, "2": 2, "10": 3}


def test_missing_is_spelled_one_way_everywhere():
    col = pd.Series(["a", None, np.nan, 3, 3.5], name="c", dtype=object)
    assert value_labels(col).tolist() == ["a", MISSING_LABEL, MISSING_LABEL, "3", "3.5"]
    enc = encode_sa(pd.Series(["x", None, "y", "x"], name="sa"), missing="category")
    assert enc.labels == ["x", MISSING_LABEL, "y"] and enc.counts()[MISSING_LABEL] == 1


def test_mixed_types_with_missing_do_not_crash():
    """race = strings, floats and NaN mixed (the analyst page's TypeError): labels, no sort."""
    col = pd.Series(["White", np.nan, 2.0, "Black", np.nan, "White"], name="race", dtype=object)
    enc = encode_sa(col, missing="category")
    assert enc.counts() == {"White": 2, MISSING_LABEL: 2, "2.0": 1, "Black": 1}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (np.linspace(-93.3, -93.1, 20_000), "looks continuous"),  # a longitude
        ([f"id{i}" for i in range(3_000)], "looks continuous"),  # more than 1,000 values
        ([f"v{i % 60}" for i in range(100)], "more than half"),
        ([i % 50 + 0.5 for i in range(400)], "decimal measurement"),
    ],
)
def test_continuous_looking_columns_are_refused_before_anything(values, message):
    series = pd.Series(values, name="x")
    with pytest.raises(InputError, match=message) as err:
        encode_sa(series)
    text = str(err.value)
    assert "'x'" in text and "\n" not in text and str(values[0]) not in text  # no raw value


def test_small_categorical_tables_are_accepted():
    assert len(encode_sa(pd.Series([f"x{i}" for i in range(10)] * 2, name="sa")).labels) == 10
    assert encode_sa(pd.Series([1.0, 2.0, 2.0] * 30, name="sa")).counts() == {"1.0": 30, "2.0": 60}


@pytest.mark.parametrize(
    "values",
    [[[1, 2], [3]] * 5, [{"a": 1}, {"b": 2}] * 5],
)
def test_list_and_struct_columns_are_refused_with_the_column_named(values):
    with pytest.raises(InputError, match="'tags' holds lists or structs"):
        encode_sa(pd.Series(values, name="tags"))


def test_parquet_list_column_is_refused(tmp_path):
    from core.data.loading import load_table

    path = tmp_path / "t.parquet"
    pd.DataFrame({"tags": [[1, 2], [3]] * 10, "sa": ["a", "b"] * 10}).to_parquet(path)
    df = load_table(path)
    with pytest.raises(InputError, match="'tags' holds lists or structs"):
        encode_sa(df["tags"])


def _labelled_by_row(series: pd.Series, drop_missing: bool):
    """The definition: a label per row, then factorize (what encode_sa computed before)."""
    per_row = value_labels(series)
    if not drop_missing:
        codes, labels = pd.factorize(per_row)
        return np.asarray(codes, dtype=np.int64), [str(v) for v in labels]
    missing = series.isna().to_numpy()
    codes = np.full(len(series), -1, dtype=np.int64)
    kept, labels = pd.factorize(per_row[~missing])
    codes[~missing] = kept
    return codes, [str(v) for v in labels]


def test_label_codes_equal_a_label_per_row_then_factorize():
    from core.balancing.records import label_codes

    rng = np.random.default_rng(8)
    pool = np.array([1, "1", "a", None, MISSING_LABEL, 2.5, "b", np.nan, 3, "3"], dtype=object)
    cases = [pd.Series(pool[rng.integers(0, len(pool), 300)]) for _ in range(30)]
    cases += [
        pd.Series([None, "x", "y", None]),
        pd.Series(["x", "y", None, "x"]),
        pd.Series(["x", "y"]),
        pd.Series([None, None, "z"]),
        pd.Series([3, 1, 3, 2]),
        pd.Series([1.0, np.nan, 2.0, 1.0]),
        pd.Series(["b", "a", None], dtype="string"),
    ]
    for series in cases:
        for drop in (False, True):
            codes, labels = label_codes(series, drop_missing=drop)
            want_codes, want_labels = _labelled_by_row(series, drop)
            assert labels == want_labels
            assert np.array_equal(codes, want_codes)
