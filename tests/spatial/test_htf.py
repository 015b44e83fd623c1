"""HTF (spec htf.md §2, §6): heights, budget shares, mechanisms, tiling, pruning, noise scales,
options."""

import math

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise, Overdraw
from core.spatial.common import geometric_shares, remaining_path_budget, tree_height
from core.spatial.htf import HTFParams, _leaf_values, build_htf, plan_budget
from core.spatial.htf_budget import HTFMechanisms
from core.spatial.release import paint
from core.spatial.unit import POINT


def split_levels_drawn(rel) -> int:
    """Split-search levels that drew (a level's own search or its exhaustive replacements)."""
    own = {m.label for m in rel.mechanisms if m.label.startswith("htf: split search")}
    replaced = {lab for m in rel.mechanisms for lab in m.in_place_of if "split search" in lab}
    return len(own | replaced)


def gaussian_F(n=20_000, ny=128, nx=128, sigma=6.0, seed=0):
    rng = np.random.default_rng(seed)
    yc, xc = rng.uniform(0, ny), rng.uniform(0, nx)
    y = rng.normal(yc, sigma, 4 * n)
    x = rng.normal(xc, sigma, 4 * n)
    ok = (x >= 0) & (x < nx) & (y >= 0) & (y < ny)
    y, x = y[ok][:n], x[ok][:n]
    F = np.zeros((ny, nx), dtype=np.int64)
    np.add.at(F, (y.astype(int), x.astype(int)), 1)
    return F


# -- analytic anchors (§6: N_hat injected = N) --------------------------------------------
ANCHORS = [  # N, eps, h, eps_data, eps at root, eps at height 0
    (1e5, 0.1, 9, 0.0909, 0.002602, 0.02082),
    (1e5, 0.3, 11, 0.2889, 0.005006, 0.06357),
    (1e5, 0.5, 12, 0.4879, 0.006619, 0.1059),
    (1e6, 0.1, 13, 0.0869, 0.0009258, 0.01866),
    (1e6, 0.3, 14, 0.2859, 0.002397, 0.06088),
    (1e6, 0.5, 15, 0.4849, 0.003206, 0.1026),
]


@pytest.mark.parametrize(("N", "eps", "h", "eps_data", "root", "leaf0"), ANCHORS)
def test_height_and_budget_anchors(N, eps, h, eps_data, root, leaf0):
    plan = plan_budget(N, eps, 1024, 1024, HTFParams(), POINT)
    assert plan["h"] == h
    assert plan["eps_data"] == pytest.approx(eps_data, rel=1e-9)
    assert plan["shares"][h] == pytest.approx(root, rel=1e-3)
    assert plan["shares"][0] == pytest.approx(leaf0, rel=1e-3)
    assert plan["eps_height"] + plan["eps_partition"] + plan["shares"].sum() == pytest.approx(
        eps, abs=1e-12
    )


@pytest.mark.parametrize(("eps", "h"), [(0.1, 15), (0.3, 16), (0.5, 17)])
def test_paper_heights_for_its_3_5_million_points(eps, h):
    assert tree_height(3.5e6, eps, 1024, 1024) == h


def test_height_clamps_and_exact_power_of_two():
    assert tree_height(0.0, 0.1, 1024, 1024) == 1
    assert tree_height(-500.0, 0.1, 1024, 1024) == 1
    assert tree_height(1e12, 0.5, 1024, 1024) == 20  # h_max on 1024^2
    assert tree_height(1e12, 0.5, 16, 8) == 7
    assert tree_height(2**10 * 10 / 0.5, 0.5, 1024, 1024) == 10  # arg exactly 2^10


def test_geometric_shares_anchor():
    s = geometric_shares(3, 1.0)[::-1]  # root to height 0
    assert s == pytest.approx([0.1710, 0.2155, 0.2715, 0.3420], abs=1e-4)
    shares = geometric_shares(3, 1.0)
    rem = remaining_path_budget(shares)
    assert rem[0] == 0.0
    assert rem[1] == shares[0]
    assert shares[:-1] / shares[1:] == pytest.approx([2 ** (1 / 3)] * 3)


# -- budget errors and cap_height ---------------------------------------------------------
def test_no_data_budget_is_an_error_naming_the_values():
    F = gaussian_F(1000, 32, 32)
    with pytest.raises(InputError, match="nothing for the counts"):
        build_htf(F, 0.004, Accountant(Noise.seeded(1)), height=5)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_epsilon_must_be_positive_and_finite(bad):
    with pytest.raises(InputError):
        build_htf(gaussian_F(100, 8, 8), bad, Accountant(Noise.seeded(1)))


def test_cap_height_lowers_h_to_fit_the_share():
    F = gaussian_F(1000, 32, 32)
    led = Accountant(Noise.seeded(1), Cost(0.004))
    rel = build_htf(F, 0.004, led, height=5, cap_height=True)
    h = rel.info["height"]
    assert h == 2  # largest h with h * 1e-3 <= 0.5 * 0.004 (no eps_height: height is fixed)
    assert rel.epsilon["partition"] == pytest.approx(0.002)
    unused = (h - split_levels_drawn(rel)) * 1e-3  # split levels the tree never reached
    assert led.spent.epsilon == pytest.approx(0.004 - unused, abs=1e-12)
    assert rel.info["label"] == "HTF (modified: cap_height)"


def test_a_charge_too_small_draws_nothing():
    led = Accountant(Noise.seeded(1), Cost(0.05))
    with pytest.raises(Overdraw):
        build_htf(gaussian_F(1000, 32, 32), 0.1, led)
    assert led.mechanisms == ()


# -- structure ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"even_axis": "x"},
        {"stop_count": 10, "stop_cells": 2},
        {"combine_pruned": True},
        {"consistency": True},
        {"split_search": "exhaustive", "height": 4},
    ],
)
@pytest.mark.parametrize(("ny", "nx"), [(64, 64), (37, 90)])
def test_leaves_tile_the_grid_and_the_mechanisms_cost_epsilon(kwargs, ny, nx):
    """Every path costs eps_height + eps_data; the split search costs eps_prt_level per level
    the tree reaches (levels below the last split never draw: their share stays unused)."""
    F = gaussian_F(30_000, ny, nx, sigma=5, seed=ny)
    for eps in (0.1, 0.5, 2.0):
        led = Accountant(Noise.seeded(7), Cost(eps))
        rel = build_htf(F, eps, led, **kwargs)
        L = rel.leaves
        assert L.dtype == np.int64
        assert np.all((L[:, 0] < L[:, 1]) & (L[:, 2] < L[:, 3]))
        assert L[:, 0].min() >= 0 and L[:, 1].max() <= ny and L[:, 3].max() <= nx
        cover = paint(L, np.ones(len(L)), ny, nx)
        assert np.allclose(cover, 1.0)
        assert rel.cells_per_leaf().sum() == ny * nx  # no overlaps
        e = rel.epsilon
        want = e["height"] + e["data"] + split_levels_drawn(rel) * 1e-3
        assert abs(led.spent.epsilon - want) <= 1e-12 and led.spent.epsilon <= eps + 1e-12
        assert abs(e["height"] + e["partition"] + e["data"] - e["total"]) <= 1e-12
        assert np.all(np.isfinite(rel.values))


@pytest.mark.parametrize("even_axis", ["y", "x"])
def test_huge_epsilon_expands_exactly_the_nodes_above_the_stop_rules(even_axis):
    """ε → ∞ (§6): exact counts, and exactly the nodes with count > stop_count, >= stop_cells
    cells and height > 0 are expanded (compared with a noise-free reference recursion)."""
    # large random integers: ties between split offsets (which tiny noise would break) are
    # practically impossible, so the noise-free reference must find the same splits
    F = gaussian_F(5000, 48, 40, sigma=4, seed=3) * 97 + np.random.default_rng(2).integers(
        0, 1000, (48, 40)
    )
    rel = build_htf(
        F, 1e9, Accountant(Noise.seeded(5)), height=9, eps_prt_level=1e8,
        stop_count=3000, stop_cells=5, even_axis=even_axis,
    )  # fmt: skip
    S = np.zeros((49, 41), dtype=np.int64)
    S[1:, 1:] = F.cumsum(0).cumsum(1)

    def count(r0, r1, c0, c1):
        return S[r1, c1] - S[r0, c1] - S[r1, c0] + S[r0, c0]

    for r0, r1, c0, c1, i in rel.info["expanded"]:
        assert count(r0, r1, c0, c1) > 3000 and (r1 - r0) * (c1 - c0) >= 5 and i > 0
    for (r0, r1, c0, c1), i, v in zip(
        rel.leaves, rel.info["leaf_heights"], rel.values, strict=True
    ):
        cells = (r1 - r0) * (c1 - c0)
        assert count(r0, r1, c0, c1) <= 3000 or cells < 5 or i == 0 or cells == 1
        assert v == count(r0, r1, c0, c1)  # exact counts
    assert len(rel.info["expanded"]) > 20 and rel.n_leaves == len(rel.info["expanded"]) + 1
    assert set(rel.info["leaf_heights"]) > {0}  # pruning by count/cells happened above height 0
    assert rel.values.sum() == F.sum()


def test_height_zero_leaves_and_axis_rule():
    """h = 2 on an 8x8 grid with no pruning: root splits rows (even height), then columns."""
    F = np.ones((8, 8), dtype=np.int64) * 50
    rel = build_htf(
        F, 1e9, Accountant(Noise.seeded(1)), height=2, eps_prt_level=1e8, stop_count=-1,
        stop_cells=1,
    )  # fmt: skip
    assert rel.n_leaves == 4
    assert list(rel.info["leaf_heights"]) == [0, 0, 0, 0]
    L = rel.leaves
    row_parts = sorted({(int(a), int(b)) for a, b in L[:, :2]})
    assert len(row_parts) == 2 and row_parts[0][0] == 0 and row_parts[0][1] == row_parts[1][0]
    for part in row_parts:  # each row part was then split along columns
        cols = sorted((int(c0), int(c1)) for (r0, r1, c0, c1) in L if (r0, r1) == part)
        assert len(cols) == 2 and cols[0][0] == 0 and cols[0][1] == cols[1][0] and cols[1][1] == 8


def test_fallback_axis_on_a_single_row():
    F = np.full((1, 16), 40, dtype=np.int64)
    rel = build_htf(
        F, 1e9, Accountant(Noise.seeded(1)), height=2, eps_prt_level=1e8, stop_count=-1,
        stop_cells=1,
    )  # fmt: skip
    assert rel.n_leaves == 4  # height 2 wants rows, the extent is 1: columns are split instead
    assert set(rel.leaves[:, 0]) == {0} and set(rel.leaves[:, 1]) == {1}


# -- noise scales (seeded mode) ------------------------------------------------------------
def _dlap_var(scale):
    """Variance of the discrete Laplace used for integer counts: 2 e^{-1/b} / (1 - e^{-1/b})^2."""
    q = math.exp(-1 / scale)
    return 2 * q / (1 - q) ** 2


def _zero_tree(seed, **kw):
    """64x64 zeros, h = 12, never pruned by count: every leaf is structural (height 0, 1x1, or
    fewer than stop_cells cells). True counts are 0, so the values are the noise."""
    F = np.zeros((64, 64), dtype=np.int64)
    return build_htf(
        F, 2.0, Accountant(Noise.seeded(seed)), height=12, eps_prt_level=0.01,
        stop_count=-1e18, **kw,
    )  # fmt: skip


def _expected_scale(rel, combined):
    """Per leaf, the Laplace scale the spec prescribes for its value."""
    shares = np.array(rel.info["eps_shares"])
    rem = np.concatenate([[0.0], np.cumsum(shares)[:-1]])
    i = rel.info["leaf_heights"]
    if combined:
        return 1 / (shares[i] + rem[i])
    return np.where(i == 0, 1 / shares[0], 1 / np.where(rem[i] > 0, rem[i], 1.0))


def _standardised(seeds, **kw):
    """Leaf values divided by their prescribed std; also the raw values and leaf heights."""
    z, raw, heights = [], [], []
    for seed in seeds:
        rel = _zero_tree(seed, **kw)
        scale = _expected_scale(rel, kw.get("combine_pruned", False))
        np.testing.assert_allclose(rel.info["leaf_noise_std"], math.sqrt(2) * scale)  # stated std
        var = np.array([_dlap_var(b) for b in scale])
        z.append(rel.values / np.sqrt(var))
        raw.append(rel.values)
        heights.append(rel.info["leaf_heights"])
    return np.concatenate(z), np.concatenate(raw), np.concatenate(heights)


def test_leaf_noise_scale_faithful():
    """Height-0 leaves carry y1 ~ Lap(1/eps_0); leaves stopped at height i > 0 a fresh
    Lap(1/rem(i)) (Alg. 3). Standardised by those scales, the errors have mean 0 and std 1."""
    z, _, heights = _standardised(range(6), stop_cells=1)
    assert len(z) > 5000 and (heights == 0).any() and (heights > 0).any()
    assert abs(z.mean()) < 5 / math.sqrt(len(z))
    assert z.std() == pytest.approx(1.0, rel=0.03)


def test_structural_leaves_faithful_vs_combine_pruned():
    """stop_cells = 5 stops nodes of < 5 cells at heights >= 1. Faithful: fresh Lap(1/rem(i));
    combine_pruned: one measurement with eps_i + rem(i) — strictly less noise (what the flag
    changes)."""
    zf, raw_f, hf = _standardised(range(8), stop_cells=5)
    zc, raw_c, _ = _standardised(range(8), stop_cells=5, combine_pruned=True)
    assert len(zf) > 5000 and (hf > 0).mean() > 0.3
    for z in (zf, zc):
        assert abs(z.mean()) < 5 / math.sqrt(len(z))
        assert z.std() == pytest.approx(1.0, rel=0.03)
    assert raw_c.std() < 0.9 * raw_f.std()


def test_combine_pruned_inverse_variance_formula_and_variance():
    """A node pruned by its noisy count: (eps_i^2 y1 + rem^2 y2) / (eps_i^2 + rem^2)."""
    noise = Noise.seeded(3)
    n, eps_i, rem_i = 40_000, 0.2, 0.5
    cnt = np.zeros(n, dtype=np.int64)
    y1 = noise.add_laplace(cnt, 1 / eps_i).astype(float)
    leaf = np.ones(n, bool)
    structural = np.zeros(n, bool)
    p_comb = HTFParams(combine_pruned=True)
    p_faith = HTFParams()

    def leaf_values(p):  # height 1 of a tree with shares (rem_i, eps_i): rem(1) = rem_i
        plan = plan_budget(None, 1.0, 4, 4, HTFParams(height=1), POINT)
        plan = type(plan)(1, 0.0, 0.0, eps_i + rem_i, np.array([rem_i, eps_i]),
                          np.array([0.0, rem_i]))  # fmt: skip
        a = Accountant(Noise.seeded(4))
        return _leaf_values(
            cnt, y1, leaf, structural, 1, p, HTFMechanisms(plan, 3, 1e-3, POINT, a), a
        )

    comb = leaf_values(p_comb)
    faith = leaf_values(p_faith)
    y2 = faith  # same stream: the faithful value is exactly y2
    w1, w2 = eps_i**2, rem_i**2
    assert comb == pytest.approx((w1 * y1 + w2 * y2) / (w1 + w2))
    v1, v2 = _dlap_var(1 / eps_i), _dlap_var(1 / rem_i)
    want = (w1**2 * v1 + w2**2 * v2) / (w1 + w2) ** 2
    assert comb.var() == pytest.approx(want, rel=0.04)
    assert faith.var() == pytest.approx(v2, rel=0.04)
    assert comb.var() < faith.var()


def test_consistency_lowers_leaf_error_on_a_fixed_tree():
    """GLS over internal y1 and leaf values: leaves sum to a better-estimated root, and the
    leaf error variance drops (what `consistency` changes; post-processing, same budget)."""
    faithful, consistent = [], []
    for seed in range(8):
        faithful.append(_zero_tree(seed, stop_cells=5).values)
        consistent.append(_zero_tree(seed, stop_cells=5, consistency=True).values)
    f, c = np.concatenate(faithful), np.concatenate(consistent)
    assert c.var() < 0.9 * f.var()
    # whole-domain error: the consistent leaves sum to the GLS root estimate, which is far
    # better than the sum of 1024 independent leaf errors
    f_tot = np.array([v.sum() for v in faithful])
    c_tot = np.array([v.sum() for v in consistent])
    assert np.abs(c_tot).mean() < np.abs(f_tot).mean()


def test_seeded_runs_are_deterministic_and_secure_runs_work():
    F = gaussian_F(5000, 32, 32)
    a = build_htf(F, 0.5, Accountant(Noise.seeded(11)))
    b = build_htf(F, 0.5, Accountant(Noise.seeded(11)))
    assert np.array_equal(a.leaves, b.leaves) and np.array_equal(a.values, b.values)
    s = build_htf(F, 0.5, Accountant(Noise.secure(), Cost(0.5)))
    assert s.cells_per_leaf().sum() == 32 * 32


def test_stated_noise_std_of_count_pruned_leaves_with_combine():
    """A leaf pruned by its noisy count under combine_pruned states sqrt(2 / (eps_i^2 + rem^2))."""
    F = np.zeros((16, 16), dtype=np.int64)
    rel = build_htf(F, 1.0, Accountant(Noise.seeded(2)), height=4, combine_pruned=True)
    assert rel.n_leaves == 1  # the root's noisy count is far below 100
    eps = rel.info["eps_shares"]
    want = math.sqrt(2 / (eps[4] ** 2 + sum(eps[:4]) ** 2))
    assert rel.info["leaf_noise_std"][0] == pytest.approx(want)
    assert (
        build_htf(F, 1.0, Accountant(Noise.seeded(2)), consistency=True).info["leaf_noise_std"]
        is None
    )
