"""DP SQL result chart and table: every GROUP BY key shown, one spelling of missing."""

from __future__ import annotations

import math

import pytest

from core.viz.dpsql import MISSING, group_labels, key_columns, result_figure, result_table

# A released result as `QueryResult.to_dict()` gives it: keys dept and year (one NULL), an
# aggregate c with intervals and a non-numeric aggregate with no intervals.
RESULT = {
    "columns": ["dept", "year", "c", "label"],
    "rows": [["HR", 2021, 10.0, "x"], ["HR", 2022, 12.0, None], ["Sales", None, 7.0, "y"]],
    "ci95": {"c": [2.0, 2.5, 3.0], "label": [None, None, None]},
    "intervals95": {"c": [[8.0, 12.0], [9.5, 14.5], [4.0, 10.0]], "label": [[None, None]] * 3},
}


def test_key_columns_are_the_non_aggregate_outputs():
    assert key_columns(RESULT["columns"], RESULT["ci95"]) == ["dept", "year"]


def test_labels_combine_every_key_and_spell_missing_once():
    labels = group_labels(RESULT["rows"], RESULT["columns"], ["dept", "year"])
    assert labels == ["HR · 2021", "HR · 2022", f"Sales · {MISSING}"]
    assert len(set(labels)) == len(labels)  # no two groups stacked on one bar
    assert group_labels([[1.0]], ["c"], []) == ["all rows"]


def test_figure_has_one_bar_and_one_error_bar_per_group():
    labels = group_labels(RESULT["rows"], RESULT["columns"], ["dept", "year"])
    values = [r[2] for r in RESULT["rows"]]
    iv = RESULT["intervals95"]["c"]
    fig = result_figure(labels, values, [a for a, _ in iv], [b for _, b in iv], "c")
    bar = fig.data[0]
    assert list(bar.x) == labels and list(bar.y) == values
    assert list(bar.error_y.array) == pytest.approx([2.0, 2.5, 3.0])
    assert list(bar.error_y.arrayminus) == pytest.approx([2.0, 2.5, 3.0])
    assert fig.layout.xaxis.type == "category"
    assert "nan" not in " ".join(map(str, bar.x)).lower()


def test_figure_leaves_a_missing_value_without_bar_or_error():
    fig = result_figure(["a", "b"], [1.0, math.nan], [0.5, None], [1.5, None], "v")
    assert list(fig.data[0].y) == [1.0, None]
    assert list(fig.data[0].error_y.array) == [0.5, None]


def test_table_spells_missing_one_way_and_adds_interval_columns():
    assert MISSING == "(missing)"  # the one spelling of pages, files and reports (issue 18.5)
    table = result_table(RESULT["rows"], RESULT["columns"], RESULT["ci95"])
    assert list(table.columns) == ["dept", "year", "c", "label", "c ±95%"]
    assert table["year"].tolist() == ["2021", "2022", MISSING]
    assert table["label"].tolist() == ["x", MISSING, "y"]
    assert table["c"].tolist() == [10.0, 12.0, 7.0]  # no missing: stays numeric
    text = table.astype(str).to_string()
    assert "None" not in text and "nan" not in text.lower()
