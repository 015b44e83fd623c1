"""HTF's split objective (Eq. 5-7, Theorem 1) and Algorithm 1 (spec §2.4-2.5, §6)."""

import numpy as np
import pytest

from core.privacy import Accountant, Noise
from core.spatial.split_search import (
    _abs_dev,
    exhaustive_split_offset,
    get_split_offset,
    objective,
    split_mechanism,
)

INF = 1e12  # noise-free in effect: lattice noise of scale ~1e-11 rounds to 0 steps


def A(noise: Noise) -> Accountant:
    """A fresh accountant (one node's search per release) on a shared noise stream."""
    return Accountant(noise)


def exhaustive(eps: float):
    return lambda n: split_mechanism("htf: exhaustive search", n, eps)


def test_fig2b_objective_values():
    F = np.array([[0, 0], [3, 3], [3, 3]])
    assert objective(F, "y", 1) == 0.0
    assert objective(F, "y", 2) == 6.0
    assert _abs_dev(F.astype(float)) == 8.0  # unsplit


def test_fig2b_noise_free_search_returns_offset_1():
    F = np.array([[0, 0], [3, 3], [3, 3]])
    assert get_split_offset(F, "y", INF, 3, A(Noise.seeded(0))) == 1


def test_objective_x_axis_is_transpose_of_y():
    rng = np.random.default_rng(5)
    F = rng.integers(0, 9, size=(6, 9))
    for s in range(1, 9):
        assert objective(F, "x", s) == pytest.approx(objective(F.T, "y", s), rel=1e-12)


def test_objective_sensitivity_below_two_on_neighbouring_datasets():
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(300):
        ny, nx = rng.integers(2, 12, size=2)
        F = rng.integers(0, 6, size=(ny, nx)) * rng.integers(0, 2, size=(ny, nx))
        G = F.copy()
        r, c = rng.integers(ny), rng.integers(nx)
        if G[r, c] > 0 and rng.random() < 0.5:
            G[r, c] -= 1  # remove a point
        else:
            G[r, c] += 1  # add a point
        for axis, L in (("y", ny), ("x", nx)):
            for s in range(1, L):
                worst = max(worst, abs(objective(F, axis, s) - objective(G, axis, s)))
    assert worst <= 2.0


def test_sensitivity_bound_is_nearly_reached():
    """The bound 2(1 - 1/|A|) is tight: a point added to a uniform part A."""
    F = np.zeros((2, 50), dtype=int)
    G = F.copy()
    G[0, 0] = 1
    d = abs(objective(G, "y", 1) - objective(F, "y", 1))
    assert d == pytest.approx(2 * (1 - 1 / 50))


def _step_matrix():
    F = np.zeros((1024, 8), dtype=np.int64)
    F[700:] = 5
    return F


@pytest.mark.parametrize(("T", "expected", "n_evals"), [(3, 704, 7), (8, 700, 17), (10, 700, 19)])
def test_noise_free_anchor_on_step_matrix(T, expected, n_evals):
    seen: list[int] = []
    s = get_split_offset(_step_matrix(), "y", INF, T, A(Noise.seeded(0)), evaluated=seen)
    assert s == expected
    assert len(seen) == n_evals


def test_split_search_invariants_under_noise():
    rng = np.random.default_rng(3)
    noise = Noise.seeded(4)
    for _ in range(400):
        L = int(rng.integers(2, 300))
        T = int(rng.integers(1, 9))
        axis = "y" if rng.random() < 0.5 else "x"
        shape = (L, 3) if axis == "y" else (3, L)
        F = rng.integers(0, 20, size=shape)
        seen: list[int] = []
        s = get_split_offset(F, axis, 1e-3, T, A(noise), evaluated=seen)
        assert 1 <= s <= L - 1
        assert len(seen) <= 2 * T + 1
        assert len(set(seen)) == len(seen)  # never two evaluations of one offset
        assert all(1 <= k <= L - 1 for k in seen)
        if L == 2:
            assert seen == []  # one candidate: no noise drawn


def test_reachable_offsets_lie_on_the_lattice():
    """With T = 3 and L = 1024 the reachable offsets are multiples of 64 (spec §2.5)."""
    noise = Noise.seeded(9)
    F = np.random.default_rng(1).integers(0, 3, size=(1024, 4))
    results = {get_split_offset(F, "y", 1e-3, 3, A(noise)) for _ in range(200)}
    assert all(s % 64 == 0 for s in results)
    assert len(results) > 3


def test_exhaustive_search_noise_free_finds_true_argmin():
    seen: list[int] = []
    assert (
        exhaustive_split_offset(_step_matrix(), "y", exhaustive(INF), A(Noise.seeded(0)), seen)
        == 700
    )
    assert seen == list(range(1, 1024))


def test_exhaustive_noise_uses_split_budget_evenly():
    """Scale 2 (L-1) / eps: with L = 3 and eps = 4 the noise has scale 1 (var 2)."""
    F = np.zeros((3, 1), dtype=int)
    rng_noise = Noise.seeded(2)
    picks = [exhaustive_split_offset(F, "y", exhaustive(4.0), A(rng_noise)) for _ in range(4000)]
    # equal objectives: the noisy argmin picks each offset about half the time
    assert abs(np.mean(np.array(picks) == 1) - 0.5) < 0.05


def test_fast_objective_equals_direct_pass():
    """The summed-area shortcut gives the same o_s as the direct numpy pass, whatever path
    (table for k = 0..2, or fallback for dense parts) each part takes."""
    from core.spatial.htf import summed_area
    from core.spatial.split_search import FastObjective

    rng = np.random.default_rng(8)
    F = rng.poisson(0.3, size=(96, 80)) * rng.integers(0, 2, size=(96, 80))
    F[20:30, 10:25] += rng.poisson(40, size=(10, 15))  # a dense spot: high k, fallback path
    for min_cells in (1, 10**9):  # tables used everywhere, or never
        fast = FastObjective(F, summed_area(F), min_cells=min_cells)
        for _ in range(300):
            r0, c0 = int(rng.integers(0, 94)), int(rng.integers(0, 78))
            r1, c1 = int(rng.integers(r0 + 2, 97)), int(rng.integers(c0 + 2, 81))
            Fr = F[r0:r1, c0:c1]
            for axis, L in (("y", r1 - r0), ("x", c1 - c0)):
                s = int(rng.integers(1, L))
                want = objective(Fr, axis, s)
                assert fast.split((r0, r1, c0, c1), axis, s) == pytest.approx(
                    want, rel=1e-9, abs=1e-9
                )
    assert set(FastObjective(F, summed_area(F), min_cells=1).tables) == set()  # lazily built


def test_fast_objective_budget_limits_tables():
    from core.spatial.htf import summed_area
    from core.spatial.split_search import FastObjective

    F = np.random.default_rng(1).integers(0, 3, size=(64, 64))
    fast = FastObjective(F, summed_area(F), max_bytes=0, min_cells=1)
    assert fast.split((0, 64, 0, 64), "y", 30) == pytest.approx(objective(F, "y", 30))
    assert fast.tables == {}


@pytest.mark.parametrize("T", [1, 3, 6])
def test_level_vectorised_search_equals_scalar_algorithm_1(T):
    """Same draws -> same offsets as the index-exact scalar `get_split_offset`, node by node."""
    from core.spatial.htf import summed_area
    from core.spatial.split_search import FastObjective, level_split_offsets

    rng = np.random.default_rng(T)
    F = rng.poisson(0.4, size=(120, 100)) * rng.integers(0, 2, size=(120, 100))
    F[40:60, 30:70] += rng.poisson(30, size=(20, 40))
    nodes, axes = [], []
    for _ in range(400):
        r0, c0 = int(rng.integers(0, 118)), int(rng.integers(0, 98))
        r1, c1 = int(rng.integers(r0 + 2, 121)), int(rng.integers(c0 + 2, 101))
        nodes.append((r0, r1, c0, c1))
        axes.append(int(rng.integers(0, 2)))
    nodes, axes = np.array(nodes), np.array(axes)
    scale = 2 * (2 * T + 1) / 0.05  # noise comparable to the objective: every branch is taken
    draws = Noise.seeded(T).laplace(scale, size=(len(nodes), 2 * T + 1))
    fast = FastObjective(F, summed_area(F), min_cells=50)
    got = level_split_offsets(nodes, axes, draws, T, fast)
    for (r0, r1, c0, c1), ax, d, g in zip(nodes, axes, draws, got, strict=True):
        want = get_split_offset(F[r0:r1, c0:c1], "yx"[ax], 0.05, T, None, draws=d)
        assert g == want


def test_split_noise_is_on_the_lattice_and_pays_for_the_rounding():
    """Secure-mode split noise: lattice-valued discrete Laplace; noisy objective values of
    same-seed neighbours differ by at most the sensitivity 2 plus one lattice step."""
    from core.spatial.split_search import (
        OBJECTIVE_LATTICE,
        noisy_objective,
        split_draws,
        split_noise_scale,
    )

    assert split_noise_scale(7, 1e-3) == 7 * (2 + OBJECTIVE_LATTICE) / 1e-3
    level = split_mechanism("htf: split search, height 1", 7, 1e-3)
    assert level.scale == split_noise_scale(7, 1e-3)  # scale = sensitivity / epsilon
    draws = split_draws(level, A(Noise.seeded(1)), (50, 7))
    assert np.array_equal(draws / OBJECTIVE_LATTICE, np.round(draws / OBJECTIVE_LATTICE))
    rng = np.random.default_rng(4)
    F = rng.poisson(3, size=(40, 40))
    G = F.copy()
    G[rng.integers(40), rng.integers(40)] += 1  # add one point
    for s in range(1, 40):
        d = split_draws(split_mechanism("one", 1, 1.0), A(Noise.seeded(s)), 1)[0]
        a = noisy_objective(objective(F, "y", s), d)
        b = noisy_objective(objective(G, "y", s), d)
        assert abs(a - b) <= 2 + OBJECTIVE_LATTICE
        assert (a / OBJECTIVE_LATTICE) == round(a / OBJECTIVE_LATTICE)
