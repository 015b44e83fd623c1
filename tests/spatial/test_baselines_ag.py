"""AG (spec htf.md §3.4, anchors §6)."""

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, MechanismKind, Noise
from core.spatial.baselines import build_ag
from core.spatial.baselines.ag import ag_inference, ag_m1, ag_m2
from core.spatial.baselines.rectangles import coverage, rect_counts, subgrid_rects, summed_area
from core.spatial.common import N_SHARE

M1 = {
    (1e5, 0.1): 10,
    (1e5, 0.3): 14,
    (1e5, 0.5): 18,
    (1e6, 0.1): 25,
    (1e6, 0.3): 44,
    (1e6, 0.5): 56,
}


@pytest.mark.parametrize(("key", "m1"), M1.items())
def test_m1_anchors(key, m1):
    assert ag_m1(*key) == m1


@pytest.mark.parametrize(("eps", "expected"), [(0.1, [1, 4, 10]), (0.5, [3, 8, 23])])
def test_m2_anchors(eps, expected):
    assert ag_m2(np.array([100.0, 1000.0, 10000.0]), eps).tolist() == expected


def test_m2_is_one_for_non_positive_counts():
    assert ag_m2(np.array([-5.0, 0.0, 1e-3]), 0.5).tolist() == [1, 1, 1]


def test_inference_by_hand():
    # alpha = 0.5, k = 4: v' = (k v + U)/(k + 1); sub-cells move by (v' - U)/k
    u = np.array([1.0, 2.0, 3.0, 4.0, 7.0])
    parent = np.array([0, 0, 0, 0, 1])
    out = ag_inference(np.array([14.0, 5.0]), u, parent, np.array([4, 1]), 0.5)
    # cell 0: U = 10, v' = (56 + 10)/5 = 13.2 -> +0.8 each; cell 1: v' = (5 + 7)/2 = 6 -> -1
    assert out == pytest.approx([1.8, 2.8, 3.8, 4.8, 6.0])


def test_subgrid_clamped_to_extents_tiles_each_parent():
    parents = np.array([[0, 3, 0, 10], [3, 4, 0, 10]])
    cells, parent = subgrid_rects(parents, np.array([3, 1]), np.array([4, 7]))
    assert np.all(coverage(cells, 4, 10) == 1)
    assert np.bincount(parent).tolist() == [12, 7]


def test_noise_free_limit_gives_exact_sub_cell_counts():
    F = np.random.default_rng(0).poisson(50.0, size=(40, 30)).astype(np.int64)
    rel = build_ag(F, 1e9, Accountant(Noise.seeded(1)), eps_n=1e8, c=1e9 * F.sum() / 20**2)
    assert rel.info["first_level_cells_per_axis"] == [10, 10]  # max(10, ...) floor on m1
    assert rel.n_leaves == 40 * 30  # huge eps: m2 is clamped to every first-level cell's extents
    assert np.allclose(rel.values, rect_counts(summed_area(F), rel.leaves), rtol=0, atol=1e-6)


def test_mechanisms_of_the_two_levels():
    F = np.random.default_rng(2).poisson(5.0, size=(64, 64)).astype(np.int64)
    rel = build_ag(F, 0.5, Accountant(Noise.seeded(2)), alpha=0.3)
    n, l1, l2 = rel.mechanisms
    eps_n = N_SHARE * 0.5
    assert n.epsilon == pytest.approx(eps_n) and n.kind is MechanismKind.LAPLACE
    assert "first-level" in l1.label and "second-level" in l2.label
    assert l1.kind is l2.kind is MechanismKind.DISCRETE_LAPLACE
    assert l1.epsilon == pytest.approx(0.3 * (0.5 - eps_n))
    assert l2.epsilon == pytest.approx(0.7 * (0.5 - eps_n))
    assert rel.info["count_noise_scale"] == [l1.scale, l2.scale]
    assert set(rel.epsilon) == {"total", "n", "level1", "level2"}


def test_rejects_bad_alpha():
    F = np.ones((8, 8), dtype=np.int64)
    for alpha in (0.0, 1.0, 1.5):
        with pytest.raises(InputError):
            build_ag(F, 0.5, Accountant(Noise.seeded(1)), alpha=alpha)
