"""DAWA in 2-D (Li et al. 2014) on the Hilbert order, with a PrivTree-style partition step."""

import math
from collections import Counter

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, Laplace, MechanismKind, Noise
from core.spatial.baselines import build_dawa, build_privtree
from core.spatial.baselines.dawa import privtree_constants, run_stats, split_runs
from core.spatial.baselines.hilbert import HilbertLayout
from core.spatial.baselines.rectangles import coverage, rect_counts, summed_area
from core.spatial.unit import PersonUnit


def _median_dev(v):
    v = np.asarray(v, float)
    return float(np.abs(v - np.median(v)).sum()) if len(v) else 0.0


@pytest.mark.parametrize(("ny", "nx"), [(8, 8), (5, 7)])
def test_run_stats_are_the_median_l1_deviation_of_the_in_grid_cells(ny, nx):
    F = np.random.default_rng(0).poisson(2.0, size=(ny, nx)).astype(np.int64)
    lay = HilbertLayout.for_grid(ny, nx)
    x = lay.to_curve(F)
    st = run_stats(x, lay.inside)
    for level, (cells, dev) in enumerate(zip(st.cells, st.dev, strict=True)):
        for j in range(len(cells)):
            sl = slice(j << level, (j + 1) << level)
            vals = x[sl][lay.inside[sl]]
            assert cells[j] == len(vals)
            assert dev[j] == pytest.approx(_median_dev(vals))


def test_score_never_grows_down_the_tree_and_moves_by_at_most_one_per_point():
    """The two properties PrivTree's theorem needs, on random data and random neighbours."""
    rng = np.random.default_rng(1)
    lay = HilbertLayout.for_grid(16, 16)
    for _ in range(30):
        F = rng.poisson(rng.uniform(0.2, 5), size=(16, 16)).astype(np.int64)
        st = run_stats(lay.to_curve(F), lay.inside)
        for level in range(1, len(st.dev)):
            assert np.all(st.dev[level - 1][0::2] <= st.dev[level] + 1e-9)
            assert np.all(st.dev[level - 1][1::2] <= st.dev[level] + 1e-9)
        G = F.copy()
        G[rng.integers(16), rng.integers(16)] += 1
        sg = run_stats(lay.to_curve(G), lay.inside)
        for a, b in zip(st.dev, sg.dev, strict=True):
            assert np.max(np.abs(a - b)) <= 1 + 1e-9


def _partition_frequencies(F, eps1, runs, scale_factor=1.0, k=1):
    """Empirical distribution of the partition (as a tuple of (start, level)) over seeds."""
    lay = HilbertLayout.for_grid(*F.shape)
    st = run_stats(lay.to_curve(F), lay.inside)
    sens, lam, delta = privtree_constants(eps1, k)
    mech = Laplace("partition", sensitivity=sens * scale_factor, epsilon=eps1)
    theta = 1.0
    out = Counter()
    for seed in range(runs):
        s, lv = split_runs(st, theta, delta * scale_factor, mech, Accountant(Noise.seeded(seed)))
        out[tuple(zip(s.tolist(), lv.tolist(), strict=True))] += 1
    return out


def _max_log_ratio(p, q, floor=400):
    """Largest |log((P+1)/(Q+1))| over partitions seen at least `floor` times in either sample
    (a partition frequent on one side and rare or absent on the other counts)."""
    worst = 0.0
    for key in set(p) | set(q):
        if max(p[key], q[key]) >= floor:
            worst = max(worst, abs(math.log((p[key] + 1) / (q[key] + 1))))
    return worst


def test_partition_step_is_eps1_dp_against_an_attacker_on_neighbours():
    """An attacker compares the distribution of partitions on neighbouring 4 x 4 grids (one
    point added at three different cells). 8,000 seeded runs each; a partition seen at least
    300 times on one side has a log-frequency standard error below 0.09 there, so a log-ratio
    above eps1 + 0.3 would be a real violation. The same harness with the noise and the bias at
    1/6 of the theorem's scale sees one (the test can fail)."""
    eps1, runs = 1.0, 8_000
    F = np.array([[3, 0, 0, 1], [0, 2, 0, 0], [0, 0, 0, 0], [1, 0, 0, 4]], dtype=np.int64)
    p = _partition_frequencies(F, eps1, runs)
    for cell in [(0, 2), (1, 1), (3, 3)]:
        G = F.copy()
        G[cell] += 1
        assert _max_log_ratio(p, _partition_frequencies(G, eps1, runs), floor=300) < eps1 + 0.3
    G = F.copy()
    G[1, 1] += 1
    p_bad = _partition_frequencies(F, eps1, runs, scale_factor=1 / 6)
    q_bad = _partition_frequencies(G, eps1, runs, scale_factor=1 / 6)
    assert _max_log_ratio(p_bad, q_bad, floor=300) > eps1 + 0.3


def test_mechanisms_and_cost_for_a_person_unit():
    F = np.random.default_rng(2).poisson(1.0, size=(32, 32)).astype(np.int64)
    a = Accountant(Noise.seeded(3), Cost(0.8))
    rel = build_dawa(F, 0.8, a, unit=PersonUnit("uid", 2))
    part, counts = rel.mechanisms
    assert part.kind is MechanismKind.LAPLACE and part.epsilon == pytest.approx(0.4)
    assert part.sensitivity == pytest.approx(2 * 3.0)  # K (2 beta - 1) / (beta - 1), beta = 2
    assert counts.kind is MechanismKind.DISCRETE_LAPLACE and counts.sensitivity == 2
    assert counts.epsilon == pytest.approx(0.4)
    assert a.spent.epsilon == pytest.approx(0.8)


@pytest.mark.parametrize(("ny", "nx"), [(64, 64), (37, 53), (1, 40)])
def test_buckets_tile_the_grid(ny, nx):
    F = np.random.default_rng(4).poisson(0.7, size=(ny, nx)).astype(np.int64)
    rel = build_dawa(F, 0.5, Accountant(Noise.seeded(5)))
    assert np.all(coverage(rel.leaves, ny, nx) == 1)
    assert len(rel.values) == rel.n_leaves


def test_huge_epsilon_keeps_only_constant_buckets_and_exact_counts():
    """With eps huge, lambda, delta and theta vanish: a run splits exactly when its counts are
    not all equal, so every bucket is constant and its value exact."""
    F = np.zeros((32, 32), dtype=np.int64)
    F[4:12, 8:24] = np.random.default_rng(6).poisson(3.0, size=(8, 16))
    rel = build_dawa(F, 1e9, Accountant(Noise.seeded(7)))
    for r0, r1, c0, c1 in rel.leaves:
        block = F[r0:r1, c0:c1]
        assert block.min() == block.max()
    assert np.array_equal(rel.values, rect_counts(summed_area(F), rel.leaves))
    assert rel.n_leaves < 32 * 32 / 2  # the empty area merged into large runs


def test_flat_bucket_noise_has_the_stated_scale():
    F = np.random.default_rng(8).poisson(30.0, size=(128, 128)).astype(np.int64)
    eps = 1.0
    rel = build_dawa(F, eps, Accountant(Noise.seeded(9)))
    resid = rel.values - rect_counts(summed_area(F), rel.leaves)
    q = math.exp(-1 / rel.info["count_noise_scale"])
    var = 2 * q / (1 - q) ** 2
    assert len(resid) > 2000
    assert abs(resid.mean()) < 5 * math.sqrt(var / len(resid))
    assert abs(resid.var() / var - 1) < 0.25


def test_hierarchy_allocation_measures_levels_over_the_buckets():
    F = np.random.default_rng(10).poisson(5.0, size=(64, 64)).astype(np.int64)
    a = Accountant(Noise.seeded(11), Cost(1.0))
    rel = build_dawa(F, 1.0, a, allocation="hierarchy")
    h = rel.info["height"]
    assert len(rel.mechanisms) == 1 + h and a.spent.epsilon == pytest.approx(1.0)
    assert all(m.epsilon == pytest.approx(0.5 / h) for m in rel.mechanisms[1:])
    assert np.all(coverage(rel.leaves, 64, 64) == 1)


def test_dense_uniform_areas_stay_whole_where_counts_alone_would_split():
    """The deviation score: a dense but flat block has deviation 0 and stays one bucket, while
    a small cluster in an empty area is cut out; PrivTree's count score splits the flat block."""
    F = np.zeros((64, 64), dtype=np.int64)
    F[:32, :32] = 40  # dense and perfectly uniform
    F[40:44, 40:44] = 40  # a small dense cluster in an empty quadrant
    rel = build_dawa(F, 2.0, Accountant(Noise.seeded(12)))
    in_flat = (rel.leaves[:, 1] <= 32) & (rel.leaves[:, 3] <= 32)
    assert rel.cells_per_leaf()[in_flat].tolist() == [32 * 32]
    holds = (rel.leaves[:, 0] <= 41) & (rel.leaves[:, 1] > 41)
    holds &= (rel.leaves[:, 2] <= 41) & (rel.leaves[:, 3] > 41)
    assert rel.cells_per_leaf()[holds][0] <= 16
    pt = build_privtree(F, 2.0, Accountant(Noise.seeded(12)))
    assert ((pt.leaves[:, 1] <= 32) & (pt.leaves[:, 3] <= 32)).sum() > 16


@pytest.mark.parametrize(
    ("kw", "match"), [({"ratio": 1.0}, "ratio"), ({"allocation": "x"}, "allocation")]
)
def test_bad_parameters_are_refused(kw, match):
    with pytest.raises(InputError, match=match):
        build_dawa(np.ones((8, 8), dtype=np.int64), 1.0, Accountant(Noise.seeded(0)), **kw)
