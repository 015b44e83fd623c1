"""Recommended's budget shares (issue 20, round 6): a noisy N that UG and AG reuse, then the
shape with a share set by that noisy N alone: nothing below VERY_LOW_SIGNAL (UG alone), 4 x 4
noisy counts below LOW_SIGNAL, 16 x 16 noisy counts and the noisy number of occupied cells from
it."""

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise
from core.spatial.baselines import build_ug
from core.spatial.selection import (
    CELLS_SHARE,
    COARSE_SHARE,
    LOW_SIGNAL,
    N_SELECTION_SHARE,
    SELECTION_SHARE,
    SHAPE_SHARE,
    VERY_LOW_SIGNAL,
    build_auto,
    choose,
    measure_features,
    shape_shares,
)
from core.spatial.synthetic import gaussian_matrix
from core.spatial.unit import PersonUnit

N_LABEL = "auto: noisy N (method choice)"
COARSE_LABEL = "auto: noisy coarse counts (method choice)"
CELLS_LABEL = "auto: noisy number of occupied cells (method choice)"
UG_CELLS = "ug: grid cell counts (disjoint cells)"


def _auto_labels(rel) -> list[str]:
    return [m.label for m in rel.mechanisms if m.label.startswith("auto:")]


def _spread(n: int, grid: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    F = np.zeros((grid, grid), dtype=np.int64)
    np.add.at(F, (rng.integers(0, grid, n), rng.integers(0, grid, n)), 1)
    return F


def test_below_very_low_signal_only_n_is_measured_and_ug_gets_the_rest():
    F = _spread(2_000)  # N x 0.9 x eps = 180: below VERY_LOW_SIGNAL
    eps = 0.1
    ledger = Accountant(Noise.seeded(3), Cost(eps))
    rel = build_auto(F, eps, ledger)
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [N_LABEL]
    assert sel.epsilon == pytest.approx(N_SELECTION_SHARE * eps)
    assert sel.epsilon_build == pytest.approx((1 - N_SELECTION_SHARE) * eps)
    assert ledger.spent.epsilon == pytest.approx(eps, abs=1e-12)
    f = sel.features
    assert f.signal < VERY_LOW_SIGNAL and sel.coarse_grid == (0, 0)
    assert set(sel.noise_scales) == {"n"}
    assert (f.top_share, f.top_quarter, f.occupied, f.dispersion) == (None,) * 4
    assert f.noisy_cells is None and f.points_per_cell is None
    assert sel.rule == choose(f).name == "very-low-signal" and rel.method == "ug"
    assert "the shape was not measured" in " ".join(rel.info["selection_reasons"])


def test_below_very_low_signal_recommended_is_ug_alone_to_the_last_bit():
    """Same seed: the noisy N is the first draw in both with the same scale, UG's grid is sized
    by it in the same way, and UG's cells get the same epsilon; so the released counts are
    identical, and there Recommended is never worse than UG."""
    for data_seed in range(3):
        F = _spread(2_500, seed=data_seed)
        for seed in range(5):
            rel = build_auto(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
            alone = build_ug(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
            assert rel.method == "ug"
            np.testing.assert_array_equal(rel.leaves, alone.leaves)
            np.testing.assert_array_equal(rel.values, alone.values)


def test_low_band_buys_4x4_counts_with_the_whole_shape_share_and_says_so():
    F = _spread(9_000)  # N x 0.9 x eps = 810: from VERY_LOW_SIGNAL to LOW_SIGNAL
    eps = 0.1
    ledger = Accountant(Noise.seeded(3), Cost(eps))
    rel = build_auto(F, eps, ledger)
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [N_LABEL, COARSE_LABEL]
    drawn = {m.label: m for m in ledger.mechanisms}
    assert drawn[N_LABEL].epsilon == pytest.approx(N_SELECTION_SHARE * eps)
    assert drawn[COARSE_LABEL].epsilon == pytest.approx(SHAPE_SHARE * eps)
    assert sel.epsilon == pytest.approx(SELECTION_SHARE * eps)
    assert sel.coarse_grid == (4, 4) and set(sel.noise_scales) == {"n", "coarse_counts"}
    assert sel.features.noisy_cells is None and sel.features.points_per_cell is None
    assert sel.epsilon_build == pytest.approx((1 - SELECTION_SHARE) * eps)
    assert ledger.spent.epsilon == pytest.approx(eps, abs=1e-12)
    assert VERY_LOW_SIGNAL <= sel.features.signal < LOW_SIGNAL
    assert sel.rule == choose(sel.features).name == "low-signal-spread" and rel.method == "ag"
    assert "4 x 4 grid of noisy counts" in " ".join(rel.info["selection_reasons"])
    assert sel.to_dict()["coarse_grid"] == [4, 4]


def test_high_band_buys_16x16_counts_and_the_occupied_cells_with_their_shares():
    F = gaussian_matrix(40_000, 10, seed=5, grid=128)
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)))
    eps = {m.label: m.epsilon for m in rel.mechanisms}
    assert _auto_labels(rel) == [N_LABEL, COARSE_LABEL, CELLS_LABEL]
    assert eps[N_LABEL] == pytest.approx(N_SELECTION_SHARE * 0.5)
    assert eps[COARSE_LABEL] == pytest.approx(COARSE_SHARE * 0.5)
    assert eps[CELLS_LABEL] == pytest.approx(CELLS_SHARE * 0.5)
    sel = rel.info["selection"]
    assert sel.coarse_grid == (16, 16) and sel.features.signal >= LOW_SIGNAL
    assert sel.epsilon == pytest.approx(SELECTION_SHARE * 0.5)
    assert "16 x 16 grid of noisy counts" in " ".join(rel.info["selection_reasons"])


def test_what_is_spent_is_a_function_of_the_noisy_n_and_the_total_is_always_eps():
    """Sizes on both sides of VERY_LOW_SIGNAL and LOW_SIGNAL, many seeds: the noisy N picks the
    band; the selection spends its N share plus `shape_shares` of the noisy signal, nothing
    else, and the release spends eps to the last bit the accountant keeps. The test sees all
    three bands (it is not vacuous)."""
    grids = set()
    sizes = (3_400, 3_700, 4_000, 12_000, 13_000, 13_500, 14_000, 15_000)  # signal 306-1,350
    for n in sizes:
        for seed in range(10):
            ledger = Accountant(Noise.seeded(seed), Cost(0.1))
            sel = build_auto(_spread(n, seed=seed), 0.1, ledger).info["selection"]
            grids.add(sel.coarse_grid)
            shape = sum(shape_shares(sel.features.signal, COARSE_SHARE, CELLS_SHARE))
            assert sel.epsilon == pytest.approx((N_SELECTION_SHARE + shape) * 0.1, rel=1e-12)
            assert sum(m.epsilon for m in ledger.mechanisms if m.label.startswith("auto:")) == (
                pytest.approx(sel.epsilon, rel=1e-12)
            )
            assert ledger.spent.epsilon == pytest.approx(0.1, rel=1e-12)
    assert grids == {(0, 0), (4, 4), (16, 16)}


def test_shape_shares_by_band():
    assert shape_shares(VERY_LOW_SIGNAL - 1, 0.03, 0.02) == (0.0, 0.0)
    assert shape_shares(VERY_LOW_SIGNAL, 0.03, 0.02) == (pytest.approx(0.05), 0.0)
    assert shape_shares(LOW_SIGNAL - 1, 0.03, 0.02) == (pytest.approx(0.05), 0.0)
    assert shape_shares(LOW_SIGNAL, 0.03, 0.02) == (0.03, 0.02)
    assert shape_shares(1e7, 0.03, 0.02) == (0.03, 0.02)


def _ug_pick(F, eps):
    """The first of seeds 0..19 for which the rules pick UG on F."""
    for seed in range(20):
        rel = build_auto(F, eps, Accountant(Noise.seeded(seed), Cost(eps)))
        if rel.method == "ug":
            return seed, rel
    raise AssertionError("UG was never picked on spread data at very low signal")


def test_ug_chosen_is_sized_by_the_selection_n_and_its_cells_get_ug_alones_share():
    """Below VERY_LOW_SIGNAL choosing UG costs nothing against UG alone: the same N (Laplace,
    sensitivity 1, same share and scale), the same grid rule, UG buys no second N, and its cells
    get what UG alone's get."""
    F = _spread(2_000)
    seed, rel = _ug_pick(F, 0.1)
    alone = build_ug(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
    assert not any(m.label.startswith("ug: noisy number") for m in rel.mechanisms)
    assert rel.info["n_from_selection"] == max(rel.info["selection"].features.noisy_n, 0.0)
    assert "n_public" not in rel.info
    assert [m.scale for m in rel.mechanisms if m.label == N_LABEL] == [
        m.scale for m in alone.mechanisms if m.label.startswith("ug: noisy number")
    ]
    cells = {m.label: m.epsilon for m in rel.mechanisms}[UG_CELLS]
    cells_alone = {m.label: m.epsilon for m in alone.mechanisms}[UG_CELLS]
    assert cells == pytest.approx(cells_alone)


def test_neighbours_same_seed_spend_the_same_and_the_choice_is_post_processing():
    """Differencing as an attacker would: add one point, same seed. The noisy N moves by exactly
    the sensitivity (1), the epsilon spent never depends on the data, and the rule is what
    `choose` gives on the released noisy features."""
    F = _spread(9_000, seed=1)  # N x eps_build = 810: the low band, above VERY_LOW_SIGNAL
    G = F.copy()
    G[10, 10] += 1
    for seed in range(20):
        a = build_auto(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1))).info["selection"]
        b = build_auto(G, 0.1, Accountant(Noise.seeded(seed), Cost(0.1))).info["selection"]
        assert b.features.noisy_n - a.features.noisy_n == pytest.approx(1.0, abs=1e-9)
        assert a.epsilon == b.epsilon == pytest.approx(SELECTION_SHARE * 0.1)
        for sel in (a, b):
            assert sel.rule == choose(sel.features).name
        assert VERY_LOW_SIGNAL <= a.features.signal < LOW_SIGNAL
        assert a.rule in ("low-signal-spread", "few-points-clustered")


def test_at_low_signal_a_compact_cluster_goes_to_dawa_and_spread_points_to_a_grid():
    """Round 3's and round 4's miss (held-out set 3): one compact Gaussian of 5,000 points (sigma
    12 cells on the 1024 grid) at eps 0.1, N x eps_build about 450. On 4 x 4 counts with 5 % of
    eps its densest quarter holds 0.87-0.99 of the noisy mass (5th-95th percentile over 400
    other seeds), spread points of the same N 0.39-0.57; there the cluster went to DAWA and the
    spread points to AG in 400 of 400 seeds. The bounds below allow a few misses (round 4's
    features sent this cluster to UG in about 1 % of seeds, and a spread set to UG or DAWA by
    coin flip)."""
    compact = gaussian_matrix(5_000, 12, seed=20_2031, grid=1024)
    spread = _spread(int(compact.sum()), grid=1024, seed=2)
    picks = {"compact": [], "spread": []}
    for seed in range(100):
        for name, F in (("compact", compact), ("spread", spread)):
            m = measure_features(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
            assert VERY_LOW_SIGNAL <= m.features.signal < LOW_SIGNAL
            picks[name].append(choose(m.features).method)
    assert picks["compact"].count("dawa") >= 90
    assert picks["spread"].count("ag") >= 95


def test_person_unit_scales_the_signal_and_the_sensitivity():
    """20,000 points at eps 0.5: 9,000 points per unit of noise for points (16 x 16 counts and
    the occupied cells), 900 for persons with at most 10 points each (4 x 4 counts), every
    measurement with sensitivity 10 for persons."""
    F = _spread(20_000)
    unit = PersonUnit("uid", 10)
    as_points = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5))).info["selection"]
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5)), unit=unit)
    as_persons = rel.info["selection"]
    assert as_points.coarse_grid == (16, 16) and as_persons.coarse_grid == (4, 4)
    drawn = {m.label: m for m in rel.mechanisms}
    assert _auto_labels(rel) == [N_LABEL, COARSE_LABEL]
    assert {drawn[lab].sensitivity for lab in (N_LABEL, COARSE_LABEL)} == {10}
    assert as_persons.features.signal == pytest.approx(
        max(as_persons.features.noisy_n, 0) * 0.5 * (1 - SELECTION_SHARE) / 10
    )
    assert as_points.features.signal >= LOW_SIGNAL > as_persons.features.signal


def test_a_declared_public_size_spends_nothing_on_n():
    F = gaussian_matrix(40_000, 10, seed=5, grid=128)
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)), public_n=40_000)
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [COARSE_LABEL, CELLS_LABEL]
    assert sel.epsilon == pytest.approx(SHAPE_SHARE * 0.5) and sel.public_n
    assert sel.features.noisy_n == 40_000
    assert "declared public number" in " ".join(rel.info["selection_reasons"])
    for n, labels, spent in ((2_000, [COARSE_LABEL], SHAPE_SHARE * 0.5), (500, [], 0.0)):
        small = build_auto(_spread(n), 0.5, Accountant(Noise.seeded(3), Cost(0.5)), public_n=n)
        assert _auto_labels(small) == labels  # 4 x 4 counts at signal 950, nothing at 237
        assert small.info["selection"].epsilon == pytest.approx(spent)
        assert small.epsilon["total"] == 0.5
        assert sum(v for k, v in small.epsilon.items() if k != "total") == pytest.approx(0.5)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"public_n": -1}, "public_n"),
        ({"public_n": float("nan")}, "public_n"),
        ({"n_share": 0.0}, "n_share"),
        ({"coarse_share": 1.0}, "coarse_share"),
        ({"n_share": 0.6, "coarse_share": 0.5}, "add up"),
    ],
)
def test_bad_shares_and_sizes_are_refused_before_any_draw(kw, message):
    ledger = Accountant(Noise.seeded(1), Cost(0.5))
    with pytest.raises(InputError, match=message):
        build_auto(_spread(500), 0.5, ledger, **kw)
    assert ledger.mechanisms == ()
