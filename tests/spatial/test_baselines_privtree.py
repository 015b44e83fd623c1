"""PrivTree (spec htf.md §3.7, anchors §6)."""

import math

import numpy as np
import pytest

from core.privacy import Accountant, Cost, MechanismKind, Noise
from core.spatial.baselines import build_privtree
from core.spatial.baselines.privtree import privtree_constants
from core.spatial.baselines.rectangles import rect_counts, summed_area


@pytest.mark.parametrize(
    ("eps", "lam", "delta"), [(0.1, 46.67, 64.69), (0.3, 15.56, 21.56), (0.5, 9.33, 12.94)]
)
def test_constants_anchor(eps, lam, delta):
    got_lam, got_delta = privtree_constants(eps)
    assert got_lam == pytest.approx(lam, abs=0.006)
    assert got_delta == pytest.approx(delta, abs=0.006)
    assert got_lam == pytest.approx(14 / (3 * eps))


def test_structure_is_one_mechanism_at_the_theorems_scale_and_leaves_another():
    F = np.random.default_rng(0).poisson(3.0, size=(64, 64)).astype(np.int64)
    a = Accountant(Noise.seeded(0), Cost(0.3))
    rel = build_privtree(F, 0.3, a)
    structure, leaves = rel.mechanisms  # the structure drew at every depth: one object
    assert structure.epsilon == 0.15 and structure.kind is MechanismKind.LAPLACE
    assert structure.scale == pytest.approx(rel.info["lambda"]) == pytest.approx(14 / (3 * 0.3))
    assert structure.sensitivity == pytest.approx(7 / 3)  # (2 beta - 1) / (beta - 1), beta = 4
    assert leaves.epsilon == 0.15 and leaves.kind is MechanismKind.DISCRETE_LAPLACE
    assert rel.info["count_noise_scale"] == pytest.approx(2 / 0.3) == leaves.scale
    assert a.spent.epsilon == pytest.approx(0.3)


def test_huge_eps_splits_every_non_empty_node_to_single_cells():
    """With eps huge, lambda and delta are ~1e-8, so a node with count >= 1 always splits and
    leaf values are exact. (Empty nodes still split with probability 1/8 = 0.5 exp(-ln 4): the
    ratio delta/lambda = ln beta does not depend on eps.)"""
    F = np.zeros((32, 32), dtype=np.int64)
    F[3:9, 20:27] = np.random.default_rng(1).poisson(2.0, size=(6, 7))
    rel = build_privtree(F, 1e9, Accountant(Noise.seeded(1)))
    true = rect_counts(summed_area(F), rel.leaves)
    cells = rel.cells_per_leaf()
    assert np.all((true == 0) | (cells == 1))
    assert np.array_equal(rel.values, true)


def test_leaf_noise_scale():
    F = np.random.default_rng(2).poisson(40.0, size=(256, 256)).astype(np.int64)
    eps = 0.5
    rel = build_privtree(F, eps, Accountant(Noise.seeded(3)))
    resid = rel.values - rect_counts(summed_area(F), rel.leaves)
    q = math.exp(-eps / 2)
    var = 2 * q / (1 - q) ** 2
    assert len(resid) > 3000
    assert abs(resid.mean()) < 5 * math.sqrt(var / len(resid))
    assert abs(resid.var() / var - 1) < 0.2  # relative sd sqrt(5/n) < 4.1 %


def test_denser_regions_get_smaller_leaves():
    F = np.zeros((128, 128), dtype=np.int64)
    F[:64, :64] = 50  # dense quadrant, the rest empty
    rel = build_privtree(F, 0.5, Accountant(Noise.seeded(4)))
    in_dense = rel.leaves[:, 1] <= 64
    in_dense &= rel.leaves[:, 3] <= 64
    assert rel.cells_per_leaf()[in_dense].mean() < rel.cells_per_leaf()[~in_dense].mean()


def test_one_structure_draw_per_node_that_can_split(monkeypatch):
    """Issue 30: a 1 x 1 node is a leaf whatever its noisy count, so it gets no structure draw.
    On a full 16 x 16 grid at a huge eps every node splits down to single cells: 1 + 4 + 16 + 64
    = 85 nodes can split and draw (the code before drew for the 256 single cells too: 341), and
    the 256 leaves get one count draw each. Counted in secure mode through a patched `Noise`."""
    from core.privacy import DRAWING

    drawn: dict[str, int] = {}
    original = {n: getattr(Noise, n) for n in ("laplace", "discrete_laplace")}

    def wrap(name):
        def patched(noise, scale, size=None):
            label = DRAWING.get().label
            drawn[label] = drawn.get(label, 0) + (1 if size is None else int(np.prod(size)))
            return original[name](noise, scale, size)

        return patched

    for name in original:
        monkeypatch.setattr(Noise, name, wrap(name))
    F = np.full((16, 16), 5, dtype=np.int64)
    a = Accountant(Noise.secure(), Cost(1e9))
    rel = build_privtree(F, 1e9, a)
    structure, leaves = rel.mechanisms
    assert len(rel.leaves) == 256 and (rel.leaves[:, 1] - rel.leaves[:, 0] == 1).all()
    assert drawn == {structure.label: 85, leaves.label: 256}
    assert a.spent.epsilon == pytest.approx(1e9)  # both mechanisms still drew and are charged


def test_a_single_cell_grid_still_records_the_structure_mechanism():
    """No node of a 1 x 1 grid can split, so the structure draws nothing; its mechanism is still
    recorded (the charge is the composition of both, as before)."""
    a = Accountant(Noise.seeded(0), Cost(1.0))
    rel = build_privtree(np.array([[7]], dtype=np.int64), 1.0, a)
    assert len(rel.mechanisms) == 2 and a.spent.epsilon == pytest.approx(1.0)
    assert len(rel.leaves) == 1
