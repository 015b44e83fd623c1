"""GLS two-pass consistency (spec htf.md §3.9)."""

import numpy as np
import pytest

from core.spatial.consistency import (
    combine_measurements,
    gls_levels,
    gls_tree,
    node_depths,
)


def random_tree(rng, n):
    """parent[v] uniform over earlier nodes: a random rooted tree numbered so parent[v] < v."""
    return np.array([-1] + [int(rng.integers(0, v)) for v in range(1, n)])


def leaf_matrix(parent):
    """A[v, j] = 1 if leaf j lies in the subtree of v."""
    n = len(parent)
    has_child = np.bincount(parent[1:], minlength=n) > 0
    leaves = np.flatnonzero(~has_child)
    A = np.zeros((n, len(leaves)))
    for j, leaf in enumerate(leaves):
        v = leaf
        while v >= 0:
            A[v, j] = 1
            v = parent[v]
    return A


def children_sums(parent, x):
    return np.bincount(parent[1:], weights=x[1:], minlength=len(parent))


def test_root_with_two_equal_variance_leaves_by_hand():
    # z_root = (y0 + s/2)/(1 + 1/2) = (2*10 + 7)/3 = 9; each child gets half of 9 - 7
    x = gls_tree(np.array([-1, 0, 0]), np.array([10.0, 3.0, 4.0]), np.array([1.0, 1.0, 1.0]))
    assert x == pytest.approx([9.0, 4.0, 5.0], rel=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_equals_weighted_least_squares(seed):
    rng = np.random.default_rng(seed)
    parent = random_tree(rng, 25)
    n = len(parent)
    y = rng.normal(20, 8, n)
    var = rng.uniform(0.2, 5.0, n)
    has_child = np.bincount(parent[1:], minlength=n) > 0
    if seed % 2:  # some internal nodes unmeasured
        var[has_child & (rng.random(n) < 0.4)] = np.inf
    x = gls_tree(parent, y, var)
    A = leaf_matrix(parent)
    m = np.isfinite(var)
    w = 1 / np.sqrt(var[m])
    t, *_ = np.linalg.lstsq(A[m] * w[:, None], y[m] * w, rcond=None)
    assert np.allclose(x, A @ t, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_parents_equal_sum_of_children(seed):
    rng = np.random.default_rng(100 + seed)
    parent = random_tree(rng, 300)
    y = rng.normal(1000, 300, 300)
    var = rng.uniform(1, 100, 300)
    x = gls_tree(parent, y, var)
    inner = np.bincount(parent[1:], minlength=300) > 0
    assert np.allclose(children_sums(parent, x)[inner], x[inner], rtol=1e-9)


def complete_binary(depth):
    """Level form of a complete binary tree: parents[d][j] = j // 2."""
    return [np.array([-1])] + [np.arange(2**d) // 2 for d in range(1, depth + 1)]


def test_unbiased_and_less_variance_than_raw_leaves():
    """Monte Carlo on a complete binary tree of depth 3 with Laplace-like variances by level."""
    rng = np.random.default_rng(7)
    parents = complete_binary(3)
    truth_leaves = rng.integers(0, 200, 8).astype(float)
    truth = [truth_leaves.reshape(2**d, -1).sum(axis=1) for d in range(4)]
    var = [np.full(2**d, v) for d, v in enumerate([8.0, 6.0, 4.0, 3.0])]
    reps = 4000
    est = np.empty((reps, 8))
    raw = np.empty((reps, 8))
    for k in range(reps):
        y = [t + rng.laplace(0, np.sqrt(v / 2)) for t, v in zip(truth, var, strict=True)]
        est[k] = gls_levels(parents, y, var)[-1]
        raw[k] = y[-1]
    err = est - truth_leaves
    # each leaf estimate has variance < 3, so its mean over 4000 reps has sd < 0.03
    assert np.all(np.abs(err.mean(axis=0)) < 5 * np.sqrt(3.0 / reps))
    # raw leaves have variance 3 (sample sd of the variance ~ 4 %); GLS must be clearly below
    assert np.all(err.var(axis=0) < 0.9 * raw.var(axis=0))


def test_hay_closed_form_for_uniform_budgets():
    """Equal variances on a complete binary tree: Hay et al.'s recursion z = 2/3 y + 1/3 sum z_c
    at height 1 (b = 2, l = 2) and the even split x_c = z_c + (x_v - sum z)/2."""
    rng = np.random.default_rng(3)
    parents = complete_binary(1)
    y = [rng.normal(10, 1, 1), rng.normal(5, 1, 2)]
    x = gls_levels(parents, y, [np.ones(1), np.ones(2)])
    z_root = 2 / 3 * y[0][0] + 1 / 3 * y[1].sum()
    assert x[0][0] == pytest.approx(z_root)
    assert x[1] == pytest.approx(y[1] + (z_root - y[1].sum()) / 2)


def test_forest_and_unbranched_chain():
    # two roots; node 2 is the only child of node 0 (a chain measured twice)
    x = gls_levels(
        [np.array([-1, -1]), np.array([0])],
        [np.array([10.0, 4.0]), np.array([14.0])],
        [np.array([1.0, 2.0]), np.array([1.0])],
    )
    assert x[0] == pytest.approx([12.0, 4.0])
    assert x[1] == pytest.approx([12.0])


def test_combine_measurements_inverse_variance_and_absent():
    y, v = combine_measurements(
        np.array([10.0, 5.0]), np.array([1.0, np.inf]), np.array([20.0, 7.0]), np.array([3.0, 2.0])
    )
    assert y == pytest.approx([12.5, 7.0])
    assert v == pytest.approx([0.75, 2.0])


def test_node_depths_and_input_checks():
    parent = np.array([-1, 0, 1, 1, 0, 4, 5])
    assert node_depths(parent).tolist() == [0, 1, 2, 2, 1, 2, 3]
    with pytest.raises(ValueError):
        gls_tree(np.array([-1, 2, 0]), np.zeros(3), np.ones(3))
    with pytest.raises(ValueError):  # an unmeasured leaf has no estimate
        gls_tree(np.array([-1, 0, 0]), np.zeros(3), np.array([1.0, 1.0, np.inf]))
