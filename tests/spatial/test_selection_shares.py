"""Recommended's budget shares (issue 20, rounds 4-5): a noisy N that UG and AG reuse, the
16 x 16 noisy counts and the noisy number of occupied cells at every signal level."""

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
    VERY_LOW_SIGNAL,
    build_auto,
    choose,
    measure_features,
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


def test_tiny_n_still_buys_the_coarse_counts_and_the_mechanisms_say_so():
    F = _spread(2_000)  # N x eps = 200: far below VERY_LOW_SIGNAL
    eps = 0.1
    ledger = Accountant(Noise.seeded(3), Cost(eps))
    rel = build_auto(F, eps, ledger)
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [N_LABEL, COARSE_LABEL, CELLS_LABEL]
    drawn = {m.label: m for m in ledger.mechanisms}
    assert drawn[N_LABEL].epsilon == pytest.approx(N_SELECTION_SHARE * eps)
    assert drawn[COARSE_LABEL].epsilon == pytest.approx(COARSE_SHARE * eps)
    assert drawn[CELLS_LABEL].epsilon == pytest.approx(CELLS_SHARE * eps)
    assert sel.epsilon == pytest.approx(SELECTION_SHARE * eps)
    assert sel.coarse_grid == (16, 16)
    assert set(sel.noise_scales) == {"n", "coarse_counts", "occupied_cells"}
    assert sel.epsilon_build == pytest.approx((1 - SELECTION_SHARE) * eps)
    assert ledger.spent.epsilon == pytest.approx(eps, abs=1e-12)
    assert sel.features.signal < VERY_LOW_SIGNAL
    assert sel.rule == choose(sel.features).name
    assert sel.rule in ("very-low-signal-spread", "low-signal")
    assert "16 x 16 grid of noisy counts" in " ".join(rel.info["selection_reasons"])
    assert sel.to_dict()["coarse_grid"] == [16, 16]


def test_enough_signal_buys_the_coarse_counts_with_their_share():
    F = gaussian_matrix(40_000, 10, seed=5, grid=128)
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)))
    eps = {m.label: m.epsilon for m in rel.mechanisms}
    assert eps[N_LABEL] == pytest.approx(N_SELECTION_SHARE * 0.5)
    assert eps[COARSE_LABEL] == pytest.approx(COARSE_SHARE * 0.5)
    assert rel.info["selection"].coarse_grid == (16, 16)


def _ug_pick(F, eps):
    """The first of seeds 0..19 for which the rules pick UG on F (the coarse counts' noise
    decides between UG and DAWA at very low signal)."""
    for seed in range(20):
        rel = build_auto(F, eps, Accountant(Noise.seeded(seed), Cost(eps)))
        if rel.method == "ug":
            return seed, rel
    raise AssertionError("UG was never picked on spread data at very low signal")


def test_ug_chosen_is_sized_by_the_selection_n_and_its_cells_miss_only_the_shape_shares():
    """Choosing UG costs only the coarse counts' and the occupied cells' shares against UG
    alone: the same N (Laplace,
    sensitivity 1, same share and scale), the same grid rule, and UG buys no second N."""
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
    assert cells == pytest.approx(cells_alone - (COARSE_SHARE + CELLS_SHARE) * 0.1)


def test_recommended_ug_has_ug_alones_grid_with_the_same_seed():
    """The noisy N is the first draw in both and has the same scale, so with one seed the grid
    UG alone draws and Recommended's UG are the same (its cells then get 5 % less epsilon)."""
    for data_seed in range(3):
        F = _spread(2_500, seed=data_seed)
        seed, rel = _ug_pick(F, 0.1)
        alone = build_ug(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
        assert rel.info["cells_per_axis"] == alone.info["cells_per_axis"]


def test_neighbours_same_seed_spend_the_same_and_the_choice_is_post_processing():
    """Differencing as an attacker would: add one point, same seed. The noisy N moves by exactly
    the sensitivity (1), the epsilon spent never depends on the data, and the rule is what
    `choose` gives on the released noisy features."""
    F = _spread(9_000, seed=1)  # N x eps_build = 828: the low-signal band (600 <= s < 1,200)
    G = F.copy()
    G[10, 10] += 1
    for seed in range(20):
        a = build_auto(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1))).info["selection"]
        b = build_auto(G, 0.1, Accountant(Noise.seeded(seed), Cost(0.1))).info["selection"]
        assert b.features.noisy_n - a.features.noisy_n == pytest.approx(1.0, abs=1e-9)
        assert a.epsilon == b.epsilon == pytest.approx(SELECTION_SHARE * 0.1)
        for sel in (a, b):
            assert sel.rule == choose(sel.features).name
        assert VERY_LOW_SIGNAL <= a.features.signal < LOW_SIGNAL and a.rule == "low-signal"


def test_at_low_signal_the_shape_is_read_and_a_compact_cluster_is_rarely_built_as_ug():
    """Round 3's miss (held-out set 3): one compact Gaussian of 5,000 points (sigma 12 cells on
    the 1024 grid) at eps 0.1, N x eps_build about 460. With the counts always bought, its
    densest 1/16 of coarse cells hold more of the noisy mass (0.34-0.49 over seeds) than spread
    points' do, so it goes to DAWA; but at 3 % of eps the counts' noise (scale 333 per cell) still
    sends it to UG now and then (4 of 400 other seeds: about 1 %), while the same number of spread
    points goes to UG in about half the seeds. Bounds: 5 of 100 for the compact set (5x the rate),
    35 of 100 for the spread one."""
    compact = gaussian_matrix(5_000, 12, seed=20_2031, grid=1024)
    spread = _spread(int(compact.sum()), grid=1024, seed=2)
    picks = {"compact": [], "spread": []}
    for seed in range(100):
        for name, F in (("compact", compact), ("spread", spread)):
            m = measure_features(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
            assert m.features.signal < VERY_LOW_SIGNAL
            picks[name].append(choose(m.features).method)
    assert picks["compact"].count("ug") <= 5
    assert picks["spread"].count("ug") >= 35


def test_person_unit_scales_the_signal_and_the_sensitivity():
    """20,000 points at eps 0.5: 9,200 points per unit of noise for points, 920 for persons with
    at most 10 points each; both buy the counts, with sensitivity 10 for persons."""
    F = _spread(20_000)
    unit = PersonUnit("uid", 10)
    as_points = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5))).info["selection"]
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5)), unit=unit)
    as_persons = rel.info["selection"]
    assert as_points.coarse_grid == as_persons.coarse_grid == (16, 16)
    drawn = {m.label: m for m in rel.mechanisms}
    assert {drawn[lab].sensitivity for lab in (N_LABEL, COARSE_LABEL, CELLS_LABEL)} == {10}
    assert as_persons.features.signal == pytest.approx(
        max(as_persons.features.noisy_n, 0) * 0.5 * (1 - SELECTION_SHARE) / 10
    )
    assert as_points.features.signal >= LOW_SIGNAL > as_persons.features.signal


def test_a_declared_public_size_spends_nothing_on_n():
    F = gaussian_matrix(40_000, 10, seed=5, grid=128)
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)), public_n=40_000)
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [COARSE_LABEL, CELLS_LABEL]
    assert sel.epsilon == pytest.approx((COARSE_SHARE + CELLS_SHARE) * 0.5) and sel.public_n
    assert sel.features.noisy_n == 40_000
    assert "declared public number" in " ".join(rel.info["selection_reasons"])
    small = build_auto(_spread(500), 0.5, Accountant(Noise.seeded(3), Cost(0.5)), public_n=500)
    assert _auto_labels(small) == [COARSE_LABEL, CELLS_LABEL]
    assert small.info["selection"].epsilon == pytest.approx((COARSE_SHARE + CELLS_SHARE) * 0.5)
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
