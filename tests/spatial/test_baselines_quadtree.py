"""QuadTree (spec htf.md §3.6) and its GLS consistency."""

import math

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise
from core.spatial.baselines import build_quadtree
from core.spatial.baselines.quadtree import quadtree_height, quadtree_max_height
from core.spatial.baselines.rectangles import coverage, quad_children, rect_counts, summed_area
from core.spatial.baselines.tree_counts import count_shares
from core.spatial.common import N_SHARE, tree_height


def test_split_rule_mid_is_floor_of_half():
    kids, parent = quad_children(np.array([[0, 5, 0, 3], [2, 3, 0, 4], [1, 2, 6, 7]]))
    assert kids.tolist() == [
        [0, 2, 0, 1], [0, 2, 1, 3], [2, 5, 0, 1], [2, 5, 1, 3],  # 4 children
        [2, 3, 0, 2], [2, 3, 2, 4],  # one row: 2 children
    ]  # fmt: skip
    assert parent.tolist() == [0, 0, 0, 0, 1, 1]  # the 1 x 1 node has none


@pytest.mark.parametrize(("n", "eps"), [(1e5, 0.1), (1e6, 0.1), (1e6, 0.5), (3.5e6, 0.5)])
def test_auto_height_is_half_the_htf_height(n, eps):
    h = tree_height(n, eps, 1024, 1024)
    assert quadtree_height(n, eps, 1024, 1024) == min(10, math.ceil(h / 2))
    assert quadtree_max_height(1024, 1024) == 10
    assert quadtree_max_height(1000, 300) == 10


def test_leaves_are_blocks_of_a_power_of_two_grid():
    F = np.random.default_rng(0).poisson(2.0, size=(64, 32)).astype(np.int64)
    rel = build_quadtree(F, 1e9, Accountant(Noise.seeded(1)), height=3)
    assert rel.n_leaves == 64
    assert set(map(tuple, rel.leaves[:, [1, 3]] - rel.leaves[:, [0, 2]])) == {(8, 4)}
    assert np.allclose(rel.values, rect_counts(summed_area(F), rel.leaves), rtol=0, atol=1e-6)
    assert rel.epsilon["n"] == 0.0 and rel.info["n_nodes"] == 1 + 4 + 16 + 64
    raw = build_quadtree(F, 1e9, Accountant(Noise.seeded(1)), height=3, consistency=False)
    assert np.array_equal(raw.values, rect_counts(summed_area(F), raw.leaves))


def test_full_depth_noise_free_reproduces_every_cell():
    F = np.random.default_rng(1).poisson(1.5, size=(13, 6)).astype(np.int64)
    rel = build_quadtree(F, 1e9, Accountant(Noise.seeded(1)), height=20)
    assert rel.info["height"] == 4 and rel.info["height_clamped_from"] == 20
    assert rel.n_leaves == 78 and np.all(coverage(rel.leaves, 13, 6) == 1)
    assert np.allclose(rel.values, rect_counts(summed_area(F), rel.leaves), rtol=0, atol=1e-6)


@pytest.mark.parametrize("count_budget", ["geometric", "uniform"])
def test_one_count_mechanism_per_level(count_budget):
    F = np.ones((32, 32), dtype=np.int64)
    a = Accountant(Noise.seeded(2), Cost(0.4))
    rel = build_quadtree(F, 0.4, a, height=4, count_budget=count_budget)
    levels = list(rel.mechanisms)
    assert [m.label for m in levels] == [
        f"quadtree: node counts, height {i}" for i in range(4, -1, -1)
    ]
    shares = count_shares(4, 0.4, count_budget)
    assert [m.epsilon for m in levels] == pytest.approx(shares[::-1].tolist())
    assert all(m.sensitivity == 1 and m.scale == 1 / m.epsilon for m in levels)
    assert abs(a.spent.epsilon - 0.4) < 1e-12
    if count_budget == "geometric":  # root gets least, ratio 2^(1/3) per level (§2.7)
        assert levels[1].epsilon / levels[0].epsilon == pytest.approx(2 ** (1 / 3))
    assert rel.epsilon == {"total": 0.4, "n": 0.0, "count": 0.4}


def test_auto_height_spends_a_share_on_n():
    F = np.random.default_rng(3).poisson(30.0, size=(64, 64)).astype(np.int64)
    a = Accountant(Noise.seeded(3), Cost(0.5))
    rel = build_quadtree(F, 0.5, a)
    assert rel.info["height"] == quadtree_height(rel.info["n_hat"], 0.5, 64, 64)
    assert rel.mechanisms[0].epsilon == pytest.approx(N_SHARE * 0.5)
    assert abs(a.spent.epsilon - 0.5) < 1e-12


def test_consistency_lowers_leaf_error_on_the_same_draws():
    """Same seed: identical raw measurements; GLS adds the upper levels' information."""
    F = np.random.default_rng(4).poisson(20.0, size=(128, 128)).astype(np.int64)
    truth = None
    mse = {}
    for consistency in (False, True):
        rel = build_quadtree(F, 0.2, Accountant(Noise.seeded(5)), height=5, consistency=consistency)
        truth = rect_counts(summed_area(F), rel.leaves)
        mse[consistency] = np.mean((rel.values - truth) ** 2)
    assert mse[True] < 0.95 * mse[False]


def test_consistent_release_sums_to_the_consistent_root():
    """Re-measure the same tree with the same seed and check GLS level by level."""
    F = np.random.default_rng(6).poisson(5.0, size=(32, 32)).astype(np.int64)
    rel = build_quadtree(F, 0.3, Accountant(Noise.seeded(6)), height=3)
    from core.spatial.baselines.quadtree import _measure_quadtree
    from core.spatial.baselines.tree_counts import CountPlan
    from core.spatial.consistency import gls_levels
    from core.spatial.unit import POINT

    a = Accountant(Noise.seeded(6))
    plan = CountPlan("quadtree", count_shares(3, 0.3, "geometric"), POINT, a)
    levels = _measure_quadtree(F, 3, plan, a)
    x = gls_levels(levels.parents, levels.y, levels.var)
    for d in range(3):
        sums = np.bincount(levels.parents[d + 1], weights=x[d + 1], minlength=len(x[d]))
        assert np.allclose(sums, x[d], rtol=1e-9)
    assert rel.values.sum() == pytest.approx(x[0][0], rel=1e-9)


def test_rejects_bad_parameters():
    F = np.ones((8, 8), dtype=np.int64)
    for kw in ({"height": -1}, {"height": "deep"}, {"count_budget": "linear"}, {"height": 2.5}):
        with pytest.raises(InputError):
            build_quadtree(F, 0.5, Accountant(Noise.seeded(1)), **kw)


def test_leaf_count_height_rule_is_a_labelled_variant_and_the_paper_rule_stays_default():
    """quadtree-leaves: 4^h ~ N eps / 400 (clamped); plain `quadtree` keeps ceil(h_HTF / 2)."""
    from core.spatial.baselines.quadtree import LEAF_SIGNAL, quadtree_height, quadtree_leaf_height
    from core.spatial.methods import LABELS, get_method

    assert quadtree_leaf_height(1e6, 0.1, 1024, 1024) == 4  # 1e5 / 400 = 250 ~ 4^4
    assert quadtree_leaf_height(1e6, 0.1, 1024, 1024) < quadtree_height(1e6, 0.1, 1024, 1024)
    assert quadtree_leaf_height(10, 0.1, 1024, 1024) == 1
    assert quadtree_leaf_height(1e12, 1.0, 64, 64) == 6  # clamped to q_max
    assert LEAF_SIGNAL == 400.0 and "improved height" in LABELS["quadtree-leaves"]
    F = np.random.default_rng(0).poisson(30.0, size=(64, 64))
    led = Accountant(Noise.seeded(1), Cost(1.0))
    rel = get_method("quadtree-leaves")(F, 1.0, led)
    assert rel.params["height_rule"] == "leaf-count"
    assert rel.info["height"] == quadtree_leaf_height(rel.info["n_hat"], 1.0 - N_SHARE, 64, 64)
    assert (
        get_method("quadtree")(F, 1.0, Accountant(Noise.seeded(1), Cost(1.0))).params["height_rule"]
        == "paper"
    )
    assert led.spent.epsilon == pytest.approx(1.0, abs=1e-12)
