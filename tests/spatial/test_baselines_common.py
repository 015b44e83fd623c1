"""Properties every baseline must have: a partition of the grid, mechanisms whose cost adds up to
eps_tot, an epsilon breakdown whose parts add up to its total, determinism under a seed,
fail-closed budget."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise, Overdraw
from core.spatial.baselines import BASELINES, LABELS
from core.spatial.baselines.rectangles import coverage
from core.spatial.common import N_SHARE

NAMES = sorted(BASELINES)
# trees that may stop above their planned height on tiny grids (every node unsplittable): the
# deeper medians never draw, so their budget stays unused (never over-spent)
MAY_STOP_EARLY = ("kdtree-geo", "kdtree-uniform")


def acct(seed: int = 1, budget: float | None = None) -> Accountant:
    return Accountant(Noise.seeded(seed), None if budget is None else Cost(budget))


def clustered_matrix(ny: int, nx: int, n: int, seed: int) -> np.ndarray:
    """A Gaussian cluster plus uniform background, binned (public synthetic test data)."""
    rng = np.random.default_rng(seed)
    k = int(0.8 * n)
    y = np.clip(rng.normal(ny * 0.3, ny / 12, k), 0, ny - 1).astype(int)
    x = np.clip(rng.normal(nx * 0.6, nx / 12, k), 0, nx - 1).astype(int)
    y = np.concatenate([y, rng.integers(0, ny, n - k)])
    x = np.concatenate([x, rng.integers(0, nx, n - k)])
    return np.bincount(y * nx + x, minlength=ny * nx).reshape(ny, nx).astype(np.int64)


@pytest.fixture(scope="module")
def F():
    return clustered_matrix(96, 80, 60_000, seed=3)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", [0.1, 0.5])
def test_partition_mechanisms_and_breakdown(name, eps, F):
    a = acct(11)
    rel = BASELINES[name](F, eps, a)
    assert rel.method == name
    assert rel.leaves.dtype == np.int64 and rel.leaves.shape == (len(rel.values), 4)
    assert rel.values.dtype == np.float64
    assert np.all(coverage(rel.leaves, *F.shape) == 1)
    assert abs(a.spent.epsilon - eps) <= 1e-12
    assert rel.mechanisms == a.mechanisms and len(rel.mechanisms) >= 1
    parts = {k: v for k, v in rel.epsilon.items() if k != "total"}
    assert rel.epsilon["total"] == eps
    assert abs(sum(parts.values()) - eps) <= 1e-12
    assert all(v >= 0 for v in parts.values())


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_release(name, F):
    a = BASELINES[name](F, 0.3, acct(5))
    b = BASELINES[name](F, 0.3, acct(5))
    assert np.array_equal(a.leaves, b.leaves)
    assert np.array_equal(a.values, b.values)


@pytest.mark.parametrize("name", NAMES)
def test_noise_free_limit_sums_to_n(name, F):
    """eps -> infinity: discrete Laplace with scale 1e-9 is exactly 0, so the raster sums to N."""
    params = (
        {"eps_n": 1e8} if name in ("ug", "ag", "kdtree-geo", "kdtree-uniform", "quadtree") else {}
    )
    rel = BASELINES[name](F, 1e9, acct(2), **params)
    assert rel.values.sum() == pytest.approx(F.sum(), rel=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_refuses_before_drawing_when_budget_is_short(name, F, monkeypatch):
    a = acct(1, budget=0.2)
    drew = []
    for draw in ("laplace", "discrete_laplace", "lattice_laplace", "uniform"):
        monkeypatch.setattr(Noise, draw, lambda *x, **k: drew.append(1))
    with pytest.raises(Overdraw):
        BASELINES[name](F, 0.3, a)
    assert a.mechanisms == () and drew == []


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", [0.0, -1.0, float("inf"), float("nan")])
def test_rejects_bad_epsilon(name, eps, F):
    with pytest.raises(InputError):
        BASELINES[name](F, eps, acct())


@pytest.mark.parametrize("name", NAMES)
def test_rejects_non_count_matrix(name):
    with pytest.raises(InputError):
        BASELINES[name](np.ones((4, 4)), 0.5, acct())
    with pytest.raises(InputError):
        BASELINES[name](-np.ones((4, 4), dtype=np.int64), 0.5, acct())


@pytest.mark.parametrize("name", NAMES)
def test_tiny_grids(name):
    """1 x 1 and 1 x n grids still give a partition and never spend more than epsilon (all of
    it, except a kd-tree that runs out of splittable nodes before its height)."""
    for shape in [(1, 1), (1, 7), (5, 3)]:
        F = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
        a = acct(4, budget=0.5)
        rel = BASELINES[name](F, 0.5, a)
        assert np.all(coverage(rel.leaves, *shape) == 1)
        assert a.spent.epsilon <= 0.5 + 1e-12
        if name not in MAY_STOP_EARLY:
            assert abs(a.spent.epsilon - 0.5) <= 1e-12


def test_every_method_has_a_label():
    assert set(LABELS) == set(BASELINES)
    assert LABELS["privelet"] == "Privelet (unweighted)"


@pytest.mark.parametrize("name", ["ug", "ag", "kdtree-geo", "kdtree-uniform", "quadtree"])
def test_methods_sized_by_n_spend_a_share_of_eps_on_a_noisy_total(name, F):
    rel = BASELINES[name](F, 0.3, acct(9))
    first = rel.mechanisms[0]
    assert first.cost.epsilon == pytest.approx(N_SHARE * 0.3) and not first.in_place_of
    assert "noisy number of points" in first.label and first.sensitivity == 1
    assert rel.epsilon["n"] == pytest.approx(N_SHARE * 0.3)
    assert "n_hat" in rel.info


@pytest.mark.parametrize("name", ["ug", "ag", "kdtree-geo", "kdtree-uniform", "quadtree"])
def test_a_declared_public_size_spends_nothing_on_n(name, F):
    rel = BASELINES[name](F, 0.3, acct(9), public_n=60_000)
    assert not any("noisy number of points" in m.label for m in rel.mechanisms)
    assert rel.epsilon["n"] == 0 and rel.info["n_public"] == 60_000


def test_ug_grid_is_sized_from_the_reported_noisy_total(F):
    from core.spatial.baselines.ug import ug_edges

    rel = BASELINES["ug"](F, 0.3, acct(9))
    re, ce = ug_edges(rel.info["n_hat"], 0.3, *F.shape)
    assert rel.info["cells_per_axis"] == [len(re) - 1, len(ce) - 1]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None)
@given(
    ny=st.integers(1, 24),
    nx=st.integers(1, 24),
    eps=st.floats(0.05, 5.0),
    seed=st.integers(0, 2**31),
)
def test_any_small_grid_is_tiled_and_spent_within_eps(name, ny, nx, eps, seed):
    F = np.random.default_rng(seed).poisson(3.0, size=(ny, nx)).astype(np.int64)
    a = Accountant(Noise.seeded(seed), Cost(eps))
    rel = BASELINES[name](F, eps, a)
    assert np.all(coverage(rel.leaves, ny, nx) == 1)
    assert a.spent.epsilon <= eps * (1 + 1e-12)
    if name not in MAY_STOP_EARLY:
        assert abs(a.spent.epsilon - eps) <= 1e-9 * eps
    assert np.all(np.isfinite(rel.values))


def test_numpy_scalar_epsilon_is_accepted(F):
    rel = BASELINES["ug"](F, np.float32(0.5), acct())
    assert rel.n_leaves > 1
