"""Recommended's budget shares scaled to the signal (issue 20, round 3): a noisy N first, the
16 x 16 noisy counts only when N x epsilon allows, UG and AG sized by that same noisy N."""

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise
from core.spatial.baselines import build_ug
from core.spatial.selection import (
    COARSE_SHARE,
    LOW_SIGNAL,
    N_SELECTION_SHARE,
    VERY_LOW_SIGNAL,
    Features,
    build_auto,
    choose,
)
from core.spatial.synthetic import gaussian_matrix
from core.spatial.unit import PersonUnit

N_LABEL = "auto: noisy N (method choice)"
COARSE_LABEL = "auto: noisy coarse counts (method choice)"


def _auto_labels(rel) -> list[str]:
    return [m.label for m in rel.mechanisms if m.label.startswith("auto:")]


def _spread(n: int, grid: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    F = np.zeros((grid, grid), dtype=np.int64)
    np.add.at(F, (rng.integers(0, grid, n), rng.integers(0, grid, n)), 1)
    return F


def test_tiny_n_buys_no_coarse_counts_and_the_mechanisms_say_so():
    F = _spread(2_000)  # N x eps = 200: far below LOW_SIGNAL
    eps = 0.1
    ledger = Accountant(Noise.seeded(3), Cost(eps))
    rel = build_auto(F, eps, ledger)
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [N_LABEL]  # no 16 x 16 counts were drawn
    assert COARSE_LABEL not in {m.label for m in ledger.mechanisms}
    n_mech = next(m for m in ledger.mechanisms if m.label == N_LABEL)
    assert n_mech.epsilon == pytest.approx(N_SELECTION_SHARE * eps) == pytest.approx(sel.epsilon)
    assert sel.coarse_grid is None and set(sel.noise_scales) == {"n"}
    assert sel.features.top_share is None and not sel.features.coarse_measured
    assert sel.epsilon_build == pytest.approx((1 - N_SELECTION_SHARE) * eps)
    assert ledger.spent.epsilon == pytest.approx(eps, abs=1e-12)
    assert sel.features.signal < VERY_LOW_SIGNAL and sel.rule == "very-low-signal"
    assert "bought none" in " ".join(rel.info["selection_reasons"])
    assert sel.to_dict()["coarse_grid"] is None


def test_enough_signal_buys_the_coarse_counts_with_their_share():
    F = gaussian_matrix(40_000, 10, seed=5, grid=128)
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)))
    eps = {m.label: m.epsilon for m in rel.mechanisms}
    assert eps[N_LABEL] == pytest.approx(N_SELECTION_SHARE * 0.5)
    assert eps[COARSE_LABEL] == pytest.approx(COARSE_SHARE * 0.5)
    assert rel.info["selection"].coarse_grid == (16, 16)


def test_ug_chosen_is_sized_by_the_selection_n_and_spends_like_ug_alone():
    """Choosing UG costs nothing against UG: the same share on N (Laplace, sensitivity 1), the
    same epsilon on the cells; UG buys no second N."""
    F = _spread(2_000)
    rel = build_auto(F, 0.1, Accountant(Noise.seeded(3), Cost(0.1)))
    alone = build_ug(F, 0.1, Accountant(Noise.seeded(3), Cost(0.1)))
    assert rel.method == "ug"
    assert not any(m.label.startswith("ug: noisy number") for m in rel.mechanisms)
    assert rel.info["n_from_selection"] == max(rel.info["selection"].features.noisy_n, 0.0)
    assert "n_public" not in rel.info
    costs = sorted(round(m.epsilon, 12) for m in rel.mechanisms)
    assert costs == sorted(round(m.epsilon, 12) for m in alone.mechanisms)
    assert [m.scale for m in rel.mechanisms if m.label == N_LABEL] == [
        m.scale for m in alone.mechanisms if m.label.startswith("ug: noisy number")
    ]


def test_neighbours_same_seed_the_choice_moves_only_with_the_noisy_values():
    """Differencing as an attacker would: add one point, same seed. The noisy N moves by exactly
    the sensitivity (1) and the rule is what `choose` gives on the released noisy features."""
    F = _spread(9_000, seed=1)  # N x eps_rest = 855: the low-signal band (600 <= s < 1,200)
    G = F.copy()
    G[10, 10] += 1
    for seed in range(20):
        a = build_auto(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1))).info["selection"]
        b = build_auto(G, 0.1, Accountant(Noise.seeded(seed), Cost(0.1))).info["selection"]
        assert b.features.noisy_n - a.features.noisy_n == pytest.approx(1.0, abs=1e-9)
        for sel in (a, b):
            replay = choose(Features(noisy_n=sel.features.noisy_n, signal=sel.features.signal))
            assert sel.rule == replay.name
        # one point moves the signal by 0.095: the rule changes only if a threshold lies between
        lo, hi = sorted((a.features.signal, b.features.signal))
        if not any(lo < t <= hi for t in (VERY_LOW_SIGNAL, LOW_SIGNAL)):
            assert a.rule == b.rule and a.epsilon == b.epsilon


def test_below_the_threshold_the_shape_is_never_read():
    """Same N, same seed, two different shapes (one tight cluster, points spread evenly): at low
    signal the selection is identical, because only the noisy N was measured."""
    compact = gaussian_matrix(3_000, 2, seed=1, grid=64)
    spread = _spread(int(compact.sum()), seed=2)
    a = build_auto(compact, 0.2, Accountant(Noise.seeded(9), Cost(0.2))).info["selection"]
    b = build_auto(spread, 0.2, Accountant(Noise.seeded(9), Cost(0.2))).info["selection"]
    assert a.features == b.features and a.rule == b.rule and a.epsilon == b.epsilon


def test_person_unit_scales_the_threshold_and_the_sensitivity():
    """20,000 points at eps 0.5: 9,500 points per unit of noise for points, 950 for persons with
    at most 10 points each, so the same data skips the coarse counts as persons."""
    F = _spread(20_000)
    unit = PersonUnit("uid", 10)
    as_points = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5))).info["selection"]
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5)), unit=unit)
    as_persons = rel.info["selection"]
    assert as_points.coarse_grid == (16, 16) and as_persons.coarse_grid is None
    n_mech = next(m for m in rel.mechanisms if m.label == N_LABEL)
    assert n_mech.sensitivity == 10
    assert as_persons.features.signal == pytest.approx(
        max(as_persons.features.noisy_n, 0) * 0.5 * (1 - N_SELECTION_SHARE) / 10
    )


def test_a_declared_public_size_spends_nothing_on_n():
    F = gaussian_matrix(40_000, 10, seed=5, grid=128)
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)), public_n=40_000)
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [COARSE_LABEL]
    assert sel.epsilon == pytest.approx(COARSE_SHARE * 0.5) and sel.public_n
    assert sel.features.noisy_n == 40_000
    assert "declared public number" in " ".join(rel.info["selection_reasons"])
    small = build_auto(_spread(500), 0.5, Accountant(Noise.seeded(3), Cost(0.5)), public_n=500)
    assert _auto_labels(small) == [] and small.info["selection"].epsilon == 0.0
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


def test_recommended_ug_is_ug_itself_with_the_same_seed():
    """When the rules pick UG, Recommended's release is UG alone at the same epsilon: the same
    noise draws in the same order (noisy N, then the cells) give the same grid and values."""
    for seed in range(5):
        F = _spread(2_500, seed=seed)
        rel = build_auto(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
        alone = build_ug(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
        assert rel.method == "ug"
        assert rel.info["cells_per_axis"] == alone.info["cells_per_axis"]
        np.testing.assert_array_equal(rel.values, alone.values)
