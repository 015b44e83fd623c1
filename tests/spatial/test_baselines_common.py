"""Properties every baseline must have: a partition of the grid, a ledger that adds up to eps_tot,
an epsilon breakdown whose parts add up to its total, determinism under a seed, fail-closed budget."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import BudgetExceededError, InputError
from core.privacy import BudgetLedger, Noise
from core.spatial.baselines import BASELINES, LABELS
from core.spatial.baselines.rectangles import coverage

NAMES = sorted(BASELINES)


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
def test_partition_ledger_and_breakdown(name, eps, F):
    ledger = BudgetLedger()
    rel = BASELINES[name](F, eps, Noise.seeded(11), ledger)
    assert rel.method == name
    assert rel.leaves.dtype == np.int64 and rel.leaves.shape == (len(rel.values), 4)
    assert rel.values.dtype == np.float64
    assert np.all(coverage(rel.leaves, *F.shape) == 1)
    assert abs(ledger.epsilon_spent - eps) <= 1e-12
    parts = {k: v for k, v in rel.epsilon.items() if k != "total"}
    assert rel.epsilon["total"] == eps
    assert abs(sum(parts.values()) - eps) <= 1e-12
    assert all(v >= 0 for v in parts.values())


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_release(name, F):
    a = BASELINES[name](F, 0.3, Noise.seeded(5), BudgetLedger())
    b = BASELINES[name](F, 0.3, Noise.seeded(5), BudgetLedger())
    assert np.array_equal(a.leaves, b.leaves)
    assert np.array_equal(a.values, b.values)


@pytest.mark.parametrize("name", NAMES)
def test_noise_free_limit_sums_to_n(name, F):
    """eps -> infinity: discrete Laplace with scale 1e-9 is exactly 0, so the raster sums to N."""
    params = (
        {"eps_n": 1e8} if name in ("ug", "ag", "kdtree-geo", "kdtree-uniform", "quadtree") else {}
    )
    rel = BASELINES[name](F, 1e9, Noise.seeded(2), BudgetLedger(), **params)
    assert rel.values.sum() == pytest.approx(F.sum(), rel=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_refuses_before_spending_when_budget_is_short(name, F):
    ledger = BudgetLedger(total_epsilon=0.2)
    with pytest.raises(BudgetExceededError):
        BASELINES[name](F, 0.3, Noise.seeded(1), ledger)
    assert ledger.spends == []


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("eps", [0.0, -1.0, float("inf"), float("nan")])
def test_rejects_bad_epsilon(name, eps, F):
    with pytest.raises(InputError):
        BASELINES[name](F, eps, Noise.seeded(1), BudgetLedger())


@pytest.mark.parametrize("name", NAMES)
def test_rejects_non_count_matrix(name):
    with pytest.raises(InputError):
        BASELINES[name](np.ones((4, 4)), 0.5, Noise.seeded(1), BudgetLedger())
    with pytest.raises(InputError):
        BASELINES[name](-np.ones((4, 4), dtype=np.int64), 0.5, Noise.seeded(1), BudgetLedger())


@pytest.mark.parametrize("name", NAMES)
def test_tiny_grids(name):
    """1 x 1 and 1 x n grids still give a partition and the full spend."""
    for shape in [(1, 1), (1, 7), (5, 3)]:
        F = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
        ledger = BudgetLedger()
        rel = BASELINES[name](F, 0.5, Noise.seeded(4), ledger)
        assert np.all(coverage(rel.leaves, *shape) == 1)
        assert abs(ledger.epsilon_spent - 0.5) <= 1e-12


def test_every_method_has_a_label():
    assert set(LABELS) == set(BASELINES)
    assert LABELS["privelet"] == "Privelet (unweighted)"


@pytest.mark.parametrize("name", ["ug", "ag", "kdtree-geo", "kdtree-uniform", "quadtree"])
def test_methods_sized_by_n_spend_eps_n_on_a_noisy_total(name, F):
    ledger = BudgetLedger()
    rel = BASELINES[name](F, 0.3, Noise.seeded(9), ledger)
    first = ledger.spends[0]
    assert first.epsilon == 1e-4 and first.composition == "sequential"
    assert "noisy number of points" in first.protects
    assert rel.epsilon["n"] == 1e-4
    assert "n_hat" in rel.info


def test_ug_grid_is_sized_from_the_reported_noisy_total(F):
    from core.spatial.baselines.ug import ug_edges

    rel = BASELINES["ug"](F, 0.3, Noise.seeded(9), BudgetLedger())
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
def test_any_small_grid_is_tiled_and_fully_spent(name, ny, nx, eps, seed):
    F = np.random.default_rng(seed).poisson(3.0, size=(ny, nx)).astype(np.int64)
    ledger = BudgetLedger()
    rel = BASELINES[name](F, eps, Noise.seeded(seed), ledger)
    assert np.all(coverage(rel.leaves, ny, nx) == 1)
    assert abs(ledger.epsilon_spent - eps) <= 1e-12
    assert np.all(np.isfinite(rel.values))


def test_numpy_scalar_epsilon_is_accepted(F):
    rel = BASELINES["ug"](F, np.float32(0.5), Noise.seeded(1), BudgetLedger())
    assert rel.n_leaves > 1
