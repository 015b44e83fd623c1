"""PP figures: the SA distribution shows the rho1 line and which values need protection."""

from __future__ import annotations

from fractions import Fraction

from core.balancing.plan import STATUS_NOTHING, plan_partition
from core.viz.balancing import SA_PRIME_COLOUR, T2_COLOUR, sa_distribution_figure


def _rho1_lines(fig) -> list[float]:
    return [shape.y0 for shape in fig.layout.shapes if shape.y0 == shape.y1]


def test_sa_distribution_colours_protected_and_frequent_values():
    plan = plan_partition({"a": 12, "b": 5, "c": 4, "d": 3}, Fraction(1, 4), Fraction(2, 3))
    fig = sa_distribution_figure(plan)
    bars = fig.data[0]
    colour = dict(zip(bars.x, bars.marker.color, strict=True))
    assert colour["a"] == T2_COLOUR  # 12 of 24 > rho1 = 1/4: not protected
    assert {colour[v] for v in "bcd"} == {SA_PRIME_COLOUR}
    assert _rho1_lines(fig) == [6.0]  # rho1 * |T| = 24 / 4


def test_nothing_to_protect_still_draws_the_rho1_line():
    plan = plan_partition({"a": 5, "b": 5, "c": 4}, Fraction(1, 4), Fraction(2, 3))
    assert plan.status == STATUS_NOTHING
    fig = sa_distribution_figure(plan)
    assert set(fig.data[0].marker.color) == {T2_COLOUR}
    assert _rho1_lines(fig) == [3.5]  # every bar (>= 4) is above rho1 * |T| = 14 / 4
