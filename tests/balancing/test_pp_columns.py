"""Published columns are the owner's decision (issue 16 item 4): the SA plus the declared
columns, in table order; the unit column never; anything else a one-line InputError naming it."""

from __future__ import annotations

import pytest

from core.balancing.columns import check_requested, parse_columns, published_columns
from core.errors import InputError

COLUMNS = ["pid", "zip", "age", "race", "subtable_note"]


def test_sa_alone_by_default():
    assert published_columns(COLUMNS, "race", "pid") == ["race"]


def test_sa_plus_declared_in_table_order():
    assert published_columns(COLUMNS, "race", "pid", ["age", "zip"]) == ["zip", "age", "race"]
    assert published_columns(COLUMNS, "race", None, ["race", "age"]) == ["age", "race"]


def test_a_request_is_bounded_by_the_declaration():
    assert published_columns(COLUMNS, "race", "pid", ["age", "zip"], ["race", "zip"]) == [
        "zip",
        "race",
    ]
    assert published_columns(COLUMNS, "race", "pid", ["age"], []) == ["race"]


@pytest.mark.parametrize(
    ("declared", "requested", "message"),
    [
        (["pid"], None, "column 'pid' is the privacy-unit column"),
        (["nope"], None, "declared publishable column 'nope' not found"),
        (["age"], ["zip"], "column 'zip' may not be published"),
        (["age"], ["pid"], "column 'pid' may not be published"),
    ],
)
def test_anything_else_is_refused_naming_the_column(declared, requested, message):
    with pytest.raises(InputError, match=message) as err:
        published_columns(COLUMNS, "race", "pid", declared, requested)
    assert "\n" not in str(err.value)


def test_the_sub_table_column_name_cannot_be_published_twice():
    with pytest.raises(InputError, match="clashes with the sub-table id column"):
        published_columns([*COLUMNS, "subtable"], "race", "pid", ["subtable"])
    with pytest.raises(InputError, match="clashes with the sub-table id column"):
        published_columns([*COLUMNS, "subtable"], "subtable", "pid")


def test_missing_sa_and_request_check_without_data():
    with pytest.raises(InputError, match="sensitive attribute column 'x' not found"):
        published_columns(COLUMNS, "x", "pid")
    check_requested("race", ["age"], ["race", "age"])  # allowed: no error
    with pytest.raises(InputError, match="'zip' may not be published"):
        check_requested("race", ["age"], ["zip"])


def test_parse_columns():
    assert parse_columns(" a, b ,,c ") == ["a", "b", "c"] and parse_columns(None) == []
