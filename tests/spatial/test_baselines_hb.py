"""HB (Qardaji, Yang, Li 2013): branching from the paper's analysis, one mechanism per level,
constrained inference."""

from fractions import Fraction

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, MechanismKind, Noise
from core.spatial.baselines import build_hb, build_identity
from core.spatial.baselines.hb import (
    Hierarchy,
    _levels_needed,
    branching_1d,
    branching_2d,
    nested_edges,
)
from core.spatial.baselines.rectangles import coverage
from core.spatial.unit import PersonUnit


def _paper_best(n):
    """Brute force over every b of the paper's Equation 3 (exact fractions)."""
    best = None
    for b in range(2, n + 1):
        h = _levels_needed(n, b)
        v = Fraction((b - 1) * h**3) - Fraction(2 * (b + 1) * h**2, 3)
        if best is None or v < best[0]:
            best = (v, b, h)
    return best[1], best[2]


def test_1d_branching_is_the_papers_minimum_and_16_for_large_domains():
    for n in [3, 17, 100, 213, 1000, 4096]:
        assert branching_1d(n) == _paper_best(n)
    assert branching_1d(2**20) == (16, 5)  # the paper's recommendation for large domains


def test_2d_branching_on_the_project_grids():
    assert branching_2d(1024) == (15, 3)
    assert branching_2d(8) == (8, 1)  # small grids: one level, i.e. the flat method


def test_levels_nest_and_reach_single_cells():
    for length, b, h in [(1024, 15, 3), (37, 4, 3), (5, 6, 1)]:
        levels = nested_edges(length, b, h)
        assert np.all(np.diff(levels[-1]) == 1)
        for up, down in zip(levels, levels[1:], strict=False):
            assert set(up.tolist()) <= set(down.tolist())


def test_one_mechanism_per_level_with_an_equal_share_and_person_sensitivity():
    F = np.random.default_rng(0).poisson(2.0, size=(64, 48)).astype(np.int64)
    a = Accountant(Noise.seeded(1), Cost(0.9))
    rel = build_hb(F, 0.9, a, unit=PersonUnit("uid", 3))
    h = rel.info["height"]
    assert len(rel.mechanisms) == h >= 2
    for m in rel.mechanisms:
        assert m.kind is MechanismKind.DISCRETE_LAPLACE
        assert m.sensitivity == 3 and m.epsilon == pytest.approx(0.9 / h)
    assert a.spent.epsilon == pytest.approx(0.9)
    assert np.all(coverage(rel.leaves, 64, 48) == 1) and np.all(rel.cells_per_leaf() == 1)


def test_small_grid_is_the_flat_method():
    F = np.random.default_rng(2).poisson(3.0, size=(8, 8)).astype(np.int64)
    hb = build_hb(F, 0.5, Accountant(Noise.seeded(4)))
    flat = build_identity(F, 0.5, Accountant(Noise.seeded(4)))
    assert hb.info["height"] == 1
    assert np.array_equal(hb.values, flat.values)  # same single mechanism, same draws


def test_constrained_inference_is_unbiased_and_beats_flat_on_large_ranges():
    """Over 200 seeded releases: every cell's mean is within 5 standard errors of the truth, and
    the whole-grid total has far less variance than the sum of 4,096 flat noisy cells."""
    F = np.random.default_rng(3).poisson(4.0, size=(64, 64)).astype(np.int64)
    eps = 1.0
    reps = [build_hb(F, eps, Accountant(Noise.seeded(s)), branching=4) for s in range(200)]
    V = np.stack([r.values for r in reps])
    se = V.std(axis=0, ddof=1) / np.sqrt(len(reps))
    assert np.all(np.abs(V.mean(axis=0) - F.reshape(-1)) < 5 * se + 1e-9)
    flat_total_var = F.size * 2 / eps**2  # Laplace(1/eps) per cell, summed
    assert V.sum(axis=1).var() < flat_total_var / 20


def test_hierarchy_parents_index_the_level_above():
    tree = Hierarchy(nested_edges(10, 3, 2), nested_edges(7, 3, 2))
    for level in (1, 2):
        p = tree.parents(level)
        ny, nx = tree.shape(level)
        assert len(p) == ny * nx and p.max() < np.prod(tree.shape(level - 1))


@pytest.mark.parametrize("bad", [1, 0, 2.5, True])
def test_bad_branching_is_refused(bad):
    F = np.ones((8, 8), dtype=np.int64)
    with pytest.raises(InputError, match="branching"):
        build_hb(F, 1.0, Accountant(Noise.seeded(0)), branching=bad)
