"""Input parsing and the issue's "Bad input" list (clear InputError, nothing computed)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from core.balancing.params import canonical_order, natural_key, parse_freqs, parse_rho
from core.balancing.plan import plan_partition
from core.errors import InputError


def test_parse_rho_exact():
    assert parse_rho("0.3") == F(3, 10)
    assert parse_rho("1/3") == F(1, 3)
    assert parse_rho(" 2/3 ") == F(2, 3)
    assert parse_rho("30%") == F(3, 10)
    assert parse_rho(0.3) == F(3, 10)  # via its shortest repr, never Fraction(0.3)
    with pytest.raises(InputError, match="not a number"):
        parse_rho("a third")


@pytest.mark.parametrize(
    ("rho1", "rho2", "match"),
    [
        (F(2, 3), F(1, 3), "must be smaller"),
        (F(1, 3), F(1, 3), "must be smaller"),
        (F(0), F(1, 2), "outside"),
        (F(1, 3), F(1), "outside"),
        (F(-1, 3), F(1, 2), "outside"),
    ],
)
def test_bad_rhos(rho1, rho2, match):
    with pytest.raises(InputError, match=match):
        plan_partition({"a": 2, "b": 1, "c": 1}, rho1, rho2)


def test_empty_and_single_value_tables():
    with pytest.raises(InputError, match="empty"):
        plan_partition({}, F(1, 3), F(2, 3))
    with pytest.raises(InputError, match="single distinct value"):
        plan_partition({"flu": 10}, F(1, 3), F(2, 3))
    with pytest.raises(InputError, match="positive whole number"):
        plan_partition({"a": 0, "b": 2}, F(1, 3), F(2, 3))


def test_natural_sort():
    labels = ["x10", "x2", "x1", "b", "a10", "a9", "10", "9"]
    assert sorted(labels, key=natural_key) == ["9", "10", "a9", "a10", "b", "x1", "x2", "x10"]
    assert sorted(["x01", "x1"], key=natural_key) == ["x01", "x1"]


def test_canonical_order_count_then_natural():
    assert canonical_order({"x10": 1, "x2": 1, "x1": 5}) == ["x1", "x2", "x10"]
    assert canonical_order({"b": 1, "a": 2}, given=["b", "a"]) == ["b", "a"]


def test_parse_freqs_keeps_order():
    assert parse_freqs("x2=3, x1=5") == ({"x2": 3, "x1": 5}, ["x2", "x1"])
    for bad in ("x1", "x1=a", "x1=1,x1=2", ""):
        with pytest.raises(InputError):
            parse_freqs(bad)


def test_given_canonical_order_changes_tie_breaking_only():
    default = plan_partition({"b": 2, "a": 2, "c": 1}, F(1, 2), F(3, 4))
    given = plan_partition({"b": 2, "a": 2, "c": 1}, F(1, 2), F(3, 4), canonical=["b", "a", "c"])
    assert default.phase1.trace[0].order == (("a", 2), ("b", 2), ("c", 1))
    assert given.phase1.trace[0].order == (("b", 2), ("a", 2), ("c", 1))
    assert default.phase1.h_sequence == given.phase1.h_sequence
