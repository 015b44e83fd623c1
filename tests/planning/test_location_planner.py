"""The location planner: the pilot is a charged release whose mechanisms are what drew; the
synthetic sets keep the pilot's noisy shape (smoothly for the mid, roughly for the high);
plans are monotone, reproducible and refuse what no ε reaches. (Its calibration against real releases is bench/plan_calibration.py.)"""

import numpy as np
import pytest

from core.errors import InputError
from core.planning.location import (
    EPSILONS,
    _predict,
    _Simulator,
    plan_location,
    recommended_methods,
)
from core.planning.pilot import Pilot, measure_pilot, quadrant_splits
from core.planning.shape import DeclaredShape, PilotShape, Placement, ShapeKind
from core.privacy import Accountant, Cost, Noise, Overdraw
from core.spatial.queries import DEFAULT_SIZES, DEFAULT_SMOOTHING
from core.spatial.synthetic import mixture_points, to_matrix
from core.spatial.unit import POINT, PersonUnit

GRID = 64


def points(n=20_000, seed=3) -> np.ndarray:
    return to_matrix(*mixture_points(n, np.random.default_rng(seed), ny=GRID, nx=GRID), GRID, GRID)


def pilot(F=None, eps=0.1, seed=1, unit=None):
    F = points() if F is None else F
    kw = {} if unit is None else {"unit": unit}
    return measure_pilot(F, eps, Accountant(Noise.seeded(seed), Cost(eps)), **kw)


def test_the_pilot_draws_only_through_its_charge():
    acc = Accountant(Noise.seeded(1), Cost(0.1))
    p = measure_pilot(points(), 0.1, acc)
    assert acc.spent.epsilon == pytest.approx(0.1)
    assert {m.kind.value for m in acc.mechanisms} == {"Laplace", "discrete Laplace"}
    with pytest.raises(Overdraw):
        measure_pilot(points(), 0.2, Accountant(Noise.seeded(1), Cost(0.1)))
    assert p.noisy_n == pytest.approx(float(np.sum(p.values)), rel=1e-9)


def test_a_person_unit_scales_the_pilot_noise():
    point = pilot()
    person = pilot(unit=PersonUnit("uid", 4))
    assert person.leaf_scale == pytest.approx(4 * point.leaf_scale)


def test_pilot_json_round_trip():
    p = pilot(unit=PersonUnit("uid", 3))
    back = Pilot.from_json(p.to_json(), release_id=7)
    assert np.array_equal(back.leaves, p.leaves) and np.allclose(back.values, p.values)
    assert back.unit == p.unit and back.release_id == 7


def test_quadrant_splits_are_shares():
    splits = quadrant_splits(pilot(eps=1.0))
    assert len(splits) > 0
    assert np.allclose(splits.sum(axis=1), 1.0) and (splits >= 0).all()


def test_pilot_shape_draws_keep_the_noisy_total_and_the_pilot_support():
    p = pilot(eps=1.0)
    shape = PilotShape(p)
    F = shape.draw(np.random.default_rng(0))
    assert F.shape == (GRID, GRID) and F.sum() == shape.n
    empty = [tuple(r) for r, v in zip(p.leaves.tolist(), p.values, strict=True) if v <= 0]
    for r0, r1, c0, c1 in empty:
        assert F[r0:r1, c0:c1].sum() == 0  # no mass where the pilot saw none


def test_declared_shapes():
    uniform = DeclaredShape(5000, ShapeKind.UNIFORM, GRID, GRID).draw(np.random.default_rng(0))
    city = DeclaredShape(5000, ShapeKind.CITY, GRID, GRID).draw(np.random.default_rng(0))
    assert uniform.sum() == city.sum() == 5000
    assert (city > 0).sum() < (uniform > 0).sum()  # clusters occupy fewer cells
    with pytest.raises(InputError):
        DeclaredShape(3, ShapeKind.UNIFORM, GRID, GRID)


def _plan(target, methods=("ug",), shape=None, seed=0):
    shape = shape or DeclaredShape(20_000, ShapeKind.CITY, GRID, GRID)
    return plan_location(shape, list(methods), target, seed=seed)


def test_a_looser_target_needs_no_more_epsilon():
    tight, loose = _plan(0.05).best.epsilon, _plan(0.2).best.epsilon
    assert loose <= tight


def test_the_range_brackets_the_simulations_and_mid_is_near_the_target():
    plan = _plan(0.1)
    best = plan.best
    low, mid, high = best.predicted.as_list()
    assert low <= mid <= high
    sims = best.predicted.simulated
    assert low <= min(sims) and max(sims) <= high
    # interpolated on the search curve, re-simulated with fresh sets: near the target
    assert 0.5 * 0.1 <= mid <= 2.0 * 0.1
    assert best.cautious_epsilon >= best.epsilon


def test_plans_are_reproducible_with_a_seed():
    a, b = _plan(0.1, seed=4), _plan(0.1, seed=4)
    assert a.to_json() == b.to_json()


def test_an_unreachable_target_is_stated_not_guessed():
    plan = _plan(1e-7)
    assert plan.best is None and plan.methods[0].epsilon is None
    assert f"No epsilon up to {EPSILONS[-1]:g}" in plan.describe()


def test_a_pilot_plan_states_its_basis():
    plan = _plan(0.1, shape=PilotShape(pilot(eps=0.2)))
    assert plan.pilot_epsilon == pytest.approx(0.2)
    assert "pilot" in plan.basis and "PrivTree" in plan.basis
    assert plan.to_json()["pilot_epsilon"] == pytest.approx(0.2)


def test_method_names():
    assert recommended_methods("Recommended, ug,ug") == ["auto", "ug"]
    with pytest.raises(InputError):
        recommended_methods("nosuch")
    with pytest.raises(InputError):
        plan_location(DeclaredShape(100, ShapeKind.UNIFORM, 8, 8), ["ug"], -1)


def test_the_rough_placement_keeps_the_total_and_stays_inside_leaves_above_the_noise():
    p = pilot(eps=0.5)
    shape = PilotShape(p)
    F = shape.draw(np.random.default_rng(0), Placement.ROUGH)
    assert F.shape == (GRID, GRID) and F.sum() == shape.n
    for (r0, r1, c0, c1), v in zip(p.leaves.tolist(), p.values, strict=True):
        if v < shape.noise_floor:  # within the pilot's noise: empty in the rough reading
            assert F[r0:r1, c0:c1].sum() == 0
    # the floor is what pure noise reaches on one of k leaves: ln(k) noise scales
    assert shape.noise_floor == pytest.approx(max(2.0, np.log(len(p.leaves))) * p.leaf_scale)


def test_the_rough_placement_leaves_more_land_empty_than_the_smooth_one():
    shape = PilotShape(pilot(eps=0.5))
    for seed in range(5):
        rng_smooth, rng_rough = np.random.default_rng(seed), np.random.default_rng(seed)
        smooth = shape.draw(rng_smooth, Placement.SMOOTH)
        rough = shape.draw(rng_rough, Placement.ROUGH)
        assert (rough > 0).sum() < (smooth > 0).sum()


def test_the_rough_placement_never_predicts_a_lower_high_than_the_smooth_one():
    shape = PilotShape(pilot(eps=0.2))
    for method in ("ug", "privtree"):
        for seed in (1, 2, 3):
            sim = _Simulator(shape, DEFAULT_SIZES, DEFAULT_SMOOTHING, POINT, seed)
            smooth_only = _predict(sim, method, 0.1, "t", 4, rough_draws=0)
            with_rough = _predict(sim, method, 0.1, "t", 4, rough_draws=3)
            assert smooth_only.rough == () and len(with_rough.rough) == 3
            assert with_rough.simulated == smooth_only.simulated  # paired: same smooth draws
            assert with_rough.high >= smooth_only.high
            assert (with_rough.low, with_rough.mid) == (smooth_only.low, smooth_only.mid)
            # and the rough data is the harder one: its MRE is above the smooth placement's
            assert np.median(with_rough.rough) > np.median(with_rough.simulated)


def test_a_declared_shape_has_no_rough_reading():
    shape = DeclaredShape(20_000, ShapeKind.CITY, GRID, GRID)
    sim = _Simulator(shape, DEFAULT_SIZES, DEFAULT_SMOOTHING, POINT, 0)
    assert _predict(sim, "ug", 0.1, "t", 3, rough_draws=3).rough == ()
    assert "lie along lines" in _plan(0.1, shape=PilotShape(pilot(eps=0.2))).basis
