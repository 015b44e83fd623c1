"""The bulk CSV writer writes exactly the bytes pandas' to_csv(index=False) writes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.balancing.csv_out import bulk_writable, write_table_csv

TEXTS = [
    "plain", "", " lead", "trail ", "a,b", 'say "hi"', "two\nlines", "tab\there", "ünïcödé",
    "NULL", "(missing)", "a'b", "x;y", "\\", "1e5", "-",
]  # fmt: skip


def _pandas_bytes(table: pd.DataFrame, tmp_path) -> bytes:
    path = tmp_path / "pandas.csv"
    table.to_csv(path, index=False)
    return path.read_bytes()


def _written(table: pd.DataFrame, tmp_path) -> bytes:
    path = tmp_path / "bulk.csv"
    write_table_csv(table, path)
    return path.read_bytes()


def test_integers_and_texts_go_in_bulk_with_identical_bytes(tmp_path):
    rng = np.random.default_rng(0)
    n = 5000
    table = pd.DataFrame(
        {
            "SEEDED-demo-not-private": "seeded",
            "col one": np.array(TEXTS, dtype=object)[rng.integers(0, len(TEXTS), n)],
            "age": rng.integers(-(2**40), 2**40, n),
            "small": rng.integers(0, 9, n).astype(np.int8),
            "subtable": rng.integers(1, 30, n),
        }
    )
    assert bulk_writable(table)
    assert _written(table, tmp_path) == _pandas_bytes(table, tmp_path)


@pytest.mark.parametrize(
    "column",
    [
        [1.5, 2.0, np.nan],  # floats: pandas formats them
        [True, False, True],  # booleans: True/False vs true/false
        ["#hash", "b", "c"],  # DuckDB quotes a '#'
        ["a\rb", "b", "c"],  # and a carriage return
        ["a", 1, "c"],  # mixed objects
    ],
)
def test_other_columns_fall_back_to_pandas_with_identical_bytes(tmp_path, column):
    table = pd.DataFrame({"x": column, "subtable": [1, 2, 3]})
    assert not bulk_writable(table)
    assert _written(table, tmp_path) == _pandas_bytes(table, tmp_path)


def test_awkward_column_names_fall_back(tmp_path):
    for name in ("a,b", 'q"uote', "#c"):
        table = pd.DataFrame({name: ["v", "w"], "subtable": [1, 2]})
        assert not bulk_writable(table)
        assert _written(table, tmp_path) == _pandas_bytes(table, tmp_path)


def test_missing_texts_are_written_as_nothing_either_way(tmp_path):
    for column in (["a", None, "c"], pd.array(["a", None, ""], dtype="string")):
        table = pd.DataFrame({"x": column, "subtable": [1, 2, 3]})
        assert _written(table, tmp_path) == _pandas_bytes(table, tmp_path)
