"""The search every planner shares: the smallest readable value at which a condition holds."""

import math

import pytest

from core.planning.search import next_down, next_up, round_up, smallest_passing


@pytest.mark.parametrize(
    ("x", "expected"),
    [(0.1234, 0.124), (0.12300000001, 0.124), (0.123, 0.123), (7.0, 7.0), (123456.0, 124000.0)],
)
def test_round_up_is_the_smallest_readable_number_not_below_x(x, expected):
    assert round_up(x) == pytest.approx(expected)
    assert round_up(x) >= x


def test_next_up_steps_one_readable_unit():
    assert next_up(0.124) == pytest.approx(0.125)
    assert next_up(9.99) == pytest.approx(10.0)
    assert next_down(0.125) == pytest.approx(0.124)
    assert next_down(1.0) == pytest.approx(0.999)


@pytest.mark.parametrize("threshold", [0.0031, 0.5, 1.0, 2.7182818, 77.7])
def test_smallest_passing_finds_the_step_and_verifies_it(threshold):
    calls = []

    def passes(x):
        calls.append(x)
        return x >= threshold

    found = smallest_passing(passes, 1e-4, 1e3)
    assert found >= threshold
    assert found == round_up(threshold)  # the smallest readable value at or above the step
    assert len(calls) < 60  # bisection, not a scan


def test_smallest_passing_is_none_when_even_the_ceiling_fails():
    assert smallest_passing(lambda x: False, 1e-4, 1e3) is None


def test_smallest_passing_at_the_floor():
    assert smallest_passing(lambda x: True, 0.01, 10) == 0.01


def test_a_step_function_rounded_past_its_step_is_stepped_up():
    # passes only on a sparse set above the threshold: the rounded value is re-checked
    def passes(x):
        return x >= 0.5 and math.isclose((x * 1000) % 5, 0, abs_tol=1e-6)

    found = smallest_passing(passes, 1e-3, 10)
    assert passes(found)
