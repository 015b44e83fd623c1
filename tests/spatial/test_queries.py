"""Query answering, workloads and MRE (spec htf.md §4, §5.1-5.2, §6) against brute force."""

import numpy as np
import pytest

from core.privacy import Accountant, Noise
from core.spatial.htf import build_htf
from core.spatial.queries import (
    answer,
    geo_to_cells,
    mean_relative_error,
    prefix_sums,
    query_shape,
    random_queries,
    relative_errors,
    release_prefix_sums,
)
from core.spatial.release import Release, paint


def brute_force(leaves, values, Q):
    """q_hat = sum over leaves of value * |leaf ∩ Q| / |leaf| (spec §4), by plain loops."""
    out = []
    for r0, r1, c0, c1 in Q:
        total = 0.0
        for (a0, a1, b0, b1), v in zip(leaves, values, strict=True):
            ov = max(0, min(r1, a1) - max(r0, a0)) * max(0, min(c1, b1) - max(c0, b0))
            total += v * ov / ((a1 - a0) * (b1 - b0))
        out.append(total)
    return np.array(out)


def random_partition(ny, nx, rng, k=30):
    """A random guillotine partition of the grid (leaves of random splits)."""
    leaves = [(0, ny, 0, nx)]
    while len(leaves) < k:
        j = int(rng.integers(len(leaves)))
        r0, r1, c0, c1 = leaves[j]
        if r1 - r0 >= 2 and (c1 - c0 < 2 or rng.random() < 0.5):
            s = int(rng.integers(r0 + 1, r1))
            leaves[j : j + 1] = [(r0, s, c0, c1), (s, r1, c0, c1)]
        elif c1 - c0 >= 2:
            s = int(rng.integers(c0 + 1, c1))
            leaves[j : j + 1] = [(r0, r1, c0, s), (r0, r1, s, c1)]
    return np.array(leaves, dtype=np.int64)


@pytest.mark.parametrize("seed", range(5))
def test_prefix_sum_answers_equal_brute_force_leaf_overlap(seed):
    rng = np.random.default_rng(seed)
    ny, nx = int(rng.integers(5, 30)), int(rng.integers(5, 30))
    leaves = random_partition(ny, nx, rng, k=int(rng.integers(2, 40)))
    values = rng.normal(0, 50, len(leaves))  # negatives kept
    rel = Release("test", leaves, values, {"total": 1.0}, ())
    Q = np.concatenate(
        [
            random_queries(ny, nx, f, 40, Noise.seeded(seed), shape="random")
            for f in (0.02, 0.1, 0.5)
        ]
    )
    P = release_prefix_sums(rel, ny, nx)
    fast = answer(P, Q)
    slow = brute_force(leaves.tolist(), values.tolist(), Q.tolist())
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-9 * np.abs(values).sum())


def test_true_answers_from_integer_prefix_sums():
    rng = np.random.default_rng(1)
    F = rng.integers(0, 9, size=(13, 17))
    S = prefix_sums(F)
    assert S.dtype == np.int64
    Q = random_queries(13, 17, 0.1, 50, Noise.seeded(2))
    want = [F[r0:r1, c0:c1].sum() for r0, r1, c0, c1 in Q]
    assert answer(S, Q).tolist() == want


def test_htf_release_answers_whole_domain_as_sum_of_values():
    F = np.random.default_rng(3).integers(0, 30, size=(32, 32))
    rel = build_htf(F, 1.0, Accountant(Noise.seeded(1)))
    P = release_prefix_sums(rel, 32, 32)
    assert answer(P, np.array([[0, 32, 0, 32]]))[0] == pytest.approx(rel.values.sum(), rel=1e-9)


def test_density_raster_paints_each_leaf_evenly():
    leaves = np.array([[0, 2, 0, 3], [2, 4, 0, 3], [0, 4, 3, 4]])
    rel = Release("t", leaves, np.array([6.0, -12.0, 8.0]), {}, ())
    D = rel.density_raster(4, 4)
    assert D[:2, :3].tolist() == [[1.0] * 3] * 2
    assert D[2:, :3].tolist() == [[-2.0] * 3] * 2
    assert D[:, 3].tolist() == [2.0] * 4
    np.testing.assert_array_equal(paint(leaves, np.ones(3), 4, 4), np.ones((4, 4)))


@pytest.mark.parametrize(("f", "side"), [(0.02, 145), (0.06, 251), (0.10, 324)])
def test_square_query_sizes_on_1024(f, side):
    w, h = query_shape(f, 1024, 1024, np.array([1.0]))
    assert (w[0], h[0]) == (side, side)


def test_workload_inside_domain_with_area_and_aspect():
    ny = nx = 1024
    for f in (0.02, 0.06, 0.10):
        Q = random_queries(ny, nx, f, 2000, Noise.seeded(5))
        r0, r1, c0, c1 = Q.T
        assert np.all((r0 >= 0) & (r1 <= ny) & (c0 >= 0) & (c1 <= nx) & (r0 < r1) & (c0 < c1))
        w, h = c1 - c0, r1 - r0
        a = w / h
        assert np.all(a >= 0.5 * (1 - 2 / h)) and np.all(a <= 2 * (1 + 2 / w))  # up to rounding
        area = w * h / (ny * nx)
        assert np.all(np.abs(area - f) <= (w + h + 1) / (ny * nx))
        assert 0.9 < np.mean(a > 1) / np.mean(a < 1) < 1.1  # symmetric between wide and tall
        # corner uniform over feasible positions: the mean centre is near the domain centre
        assert (
            abs(((r0 + r1) / 2).mean() - ny / 2) < 15 and abs(((c0 + c1) / 2).mean() - nx / 2) < 15
        )


def test_clip_placement_keeps_queries_inside():
    Q = random_queries(64, 50, 0.1, 500, Noise.seeded(1), placement="clip")
    r0, r1, c0, c1 = Q.T
    assert np.all((r0 >= 0) & (r1 <= 64) & (c0 >= 0) & (c1 <= 50) & (r0 < r1) & (c0 < c1))


def test_square_workload_and_secure_workload():
    Q = random_queries(100, 100, 0.04, 10, Noise.seeded(1), shape="square")
    assert np.all(Q[:, 1] - Q[:, 0] == 20) and np.all(Q[:, 3] - Q[:, 2] == 20)
    assert random_queries(100, 100, 0.04, 10, Noise.secure()).shape == (10, 4)


def test_relative_error_examples_and_no_clipping():
    assert relative_errors(np.array([10.0]), np.array([0.0]))[0] == 0.5
    assert relative_errors(np.array([90.0]), np.array([100.0]))[0] == pytest.approx(0.1)
    # a negative estimate is scored as is (clipping at 0 would hide the error)
    assert relative_errors(np.array([-10.0]), np.array([0.0]))[0] == 0.5
    assert mean_relative_error([10.0, 90.0], [0.0, 100.0]) == pytest.approx(0.3)
    assert relative_errors(np.array([5.0]), np.array([0.0]), smoothing=1)[0] == 5.0


def test_geo_query_box_snaps_to_cells():
    bbox = (0.0, 0.0, 10.0, 10.0)
    assert geo_to_cells((1.04, 2.96, 4.4, 6.6), bbox, 10, 10) == (3, 7, 1, 4)
    assert geo_to_cells((5.0, 5.0, 5.01, 5.01), bbox, 10, 10) == (5, 6, 5, 6)  # at least one cell
