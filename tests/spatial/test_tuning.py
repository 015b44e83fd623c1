"""Tuning view core: MRE-vs-epsilon curves and the smallest epsilon reaching a target."""

import math

import numpy as np
import pytest

from core.errors import InputError
from core.spatial.synthetic import gaussian_matrix
from core.spatial.tuning import (
    Reach,
    TuningPoint,
    TuningResult,
    epsilon_grid,
    smallest_epsilon,
    tune,
)
from core.viz.tuning import tuning_figure

EPS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6)


def pts(mres, eps=EPS):
    return [TuningPoint(e, m, None) for e, m in zip(eps, mres, strict=True)]


def test_epsilon_grid_is_log_spaced_with_the_requested_ends():
    g = epsilon_grid(0.05, 2.0, 7)
    assert len(g) == 7 and g[0] == 0.05 and g[-1] == 2.0
    ratios = np.diff(np.log(g))
    assert np.allclose(ratios, ratios[0], rtol=0.01)
    with pytest.raises(InputError):
        epsilon_grid(0.05, 2.0, 5)
    with pytest.raises(InputError):
        epsilon_grid(1.0, 0.5, 7)


def test_power_law_curve_gives_the_exact_crossing():
    """MRE = c / eps is a line in log-log, so the interpolated crossing is exactly c / target."""
    c, target = 0.03, 0.25
    s = smallest_epsilon(pts([c / e for e in EPS]), target)
    assert s.reach is Reach.INTERPOLATED
    assert s.epsilon == pytest.approx(c / target, rel=1e-9)
    assert 0.1 < s.epsilon < 0.2


def test_met_at_the_smallest_epsilon_and_never_met():
    s = smallest_epsilon(pts([0.1, 0.09, 0.05, 0.04, 0.03, 0.02]), 0.2)
    assert s.reach is Reach.BELOW_RANGE and s.epsilon == 0.05
    s = smallest_epsilon(pts([3, 2, 1.5, 1.2, 1.1, 1.0]), 0.5)
    assert s.reach is Reach.NOT_REACHED and s.epsilon is None


def test_a_noisy_bump_above_the_target_moves_the_answer_right():
    """MRE dips under the target at 0.1, rises over it at 0.2, and stays under from 0.4 on: the
    answer is between 0.2 and 0.4 (the epsilon from which the target holds for good)."""
    s = smallest_epsilon(pts([0.5, 0.18, 0.3, 0.15, 0.1, 0.05]), 0.2)
    assert s.reach is Reach.INTERPOLATED and 0.2 < s.epsilon < 0.4
    # exact log-log interpolation between (0.2, 0.3) and (0.4, 0.15)
    t = (math.log(0.3) - math.log(0.2)) / (math.log(0.3) - math.log(0.15))
    assert s.epsilon == pytest.approx(math.exp(math.log(0.2) + t * math.log(2)), rel=1e-9)


def test_bad_points_and_targets_are_refused():
    with pytest.raises(InputError):
        smallest_epsilon(pts([1, 1, 1, 1, 1, 1]), 0)
    with pytest.raises(ValueError):
        smallest_epsilon(pts([1, 1, 1, 1, 1, 1], eps=(0.1, 0.05, 0.2, 0.4, 0.8, 1.6)), 0.5)


@pytest.fixture(scope="module")
def F():
    return gaussian_matrix(5_000, 16, seed=4, grid=64)


@pytest.fixture(scope="module")
def result(F):
    return tune(F, ["identity", "privtree"], EPS, 0.3, reps=3, n_queries=200, seed=11)


def test_tune_measures_every_method_at_every_epsilon(result):
    assert isinstance(result, TuningResult)
    assert [c.method for c in result.curves] == ["identity", "privtree"]
    for c in result.curves:
        assert [p.epsilon for p in c.points] == list(EPS)
        assert all(p.mre > 0 and p.mre_std is not None for p in c.points)
        assert c.smallest == smallest_epsilon(c.points, 0.3)
    assert len(result.to_rows()) == 12 and result.noise["mode"] == "seeded"
    assert "raw data" in result.label


def test_more_epsilon_means_less_error(result):
    """32x more epsilon: every method's MRE drops clearly (a broken epsilon wiring would not)."""
    for c in result.curves:
        assert c.points[-1].mre < 0.5 * c.points[0].mre


def test_seeded_tuning_is_reproducible(F, result):
    again = tune(F, ["identity", "privtree"], EPS, 0.3, reps=3, n_queries=200, seed=11)
    assert again.to_rows() == result.to_rows()


def test_tune_refuses_bad_input(F):
    with pytest.raises(InputError):
        tune(F, ["ug"], EPS[:5], 0.3)
    with pytest.raises(InputError):
        tune(F, ["ug"], (0.1,) * 6, 0.3)
    with pytest.raises(InputError):
        tune(F, [], EPS, 0.3)
    with pytest.raises(InputError):
        tune(F, ["ug"], EPS, -1)
    with pytest.raises(InputError):
        tune(np.zeros((8, 8), dtype=np.int64), ["ug"], EPS, 0.3)


def test_figure_has_log_axes_error_bars_and_the_target(result):
    fig = tuning_figure(result)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert len(fig.data) == 2
    for trace, curve in zip(fig.data, result.curves, strict=True):
        assert list(trace.x) == list(EPS)
        assert list(trace.error_y.array) == [p.mre_std for p in curve.points]
    hlines = [s for s in fig.layout.shapes if s.y0 == s.y1 == 0.3]
    assert len(hlines) == 1
    assert "raw data" in fig.layout.title.text
