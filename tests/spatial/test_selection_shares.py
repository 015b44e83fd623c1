"""Recommended's budget (issue 31, round 7): one noisy N at N_SELECTION_SHARE of epsilon, fixed
before any draw and charged with the chosen method's mechanisms; UG (below VERY_LOW_SIGNAL) is
sized by that N; with a declared public size nothing is spent on choosing."""

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise
from core.spatial.baselines import build_privtree, build_ug
from core.spatial.selection import (
    N_SELECTION_SHARE,
    SELECTION_SHARE,
    VERY_LOW_SIGNAL,
    build_auto,
    choose,
)
from core.spatial.synthetic import gaussian_matrix
from core.spatial.unit import PersonUnit

N_LABEL = "auto: noisy N (method choice)"
UG_CELLS = "ug: grid cell counts (disjoint cells)"


def _auto_labels(rel) -> list[str]:
    return [m.label for m in rel.mechanisms if m.label.startswith("auto:")]


def _spread(n: int, grid: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    F = np.zeros((grid, grid), dtype=np.int64)
    np.add.at(F, (rng.integers(0, grid, n), rng.integers(0, grid, n)), 1)
    return F


def test_below_very_low_signal_ug_is_sized_by_the_selection_n_and_gets_the_rest():
    F = _spread(2_000)  # N x 0.99 x eps = 198: below VERY_LOW_SIGNAL
    eps = 0.1
    ledger = Accountant(Noise.seeded(3), Cost(eps))
    rel = build_auto(F, eps, ledger)
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [N_LABEL] and set(sel.noise_scales) == {"n"}
    assert sel.epsilon == pytest.approx(N_SELECTION_SHARE * eps)
    assert sel.epsilon_build == pytest.approx((1 - N_SELECTION_SHARE) * eps)
    assert ledger.spent.epsilon == pytest.approx(eps, abs=1e-12)
    assert sel.features.signal < VERY_LOW_SIGNAL
    assert sel.rule == choose(sel.features).name == "very-low-signal" and rel.method == "ug"
    # no second N: the grid is sized by the selection's noisy N, as UG alone sizes it at eps
    assert not any(m.label.startswith("ug: noisy number") for m in rel.mechanisms)
    assert rel.info["n_from_selection"] == max(sel.features.noisy_n, 0.0)
    assert "n_public" not in rel.info
    alone = build_ug(F, eps, Accountant(Noise.seeded(3), Cost(eps)), public_n=sel.features.noisy_n)
    assert rel.leaves.shape == alone.leaves.shape
    np.testing.assert_array_equal(rel.leaves, alone.leaves)
    # the cells get what is left, more than UG alone's (which buys its own N)
    cells = {m.label: m.epsilon for m in rel.mechanisms}[UG_CELLS]
    plain = build_ug(F, eps, Accountant(Noise.seeded(3), Cost(eps)))
    assert cells == pytest.approx(sel.epsilon_build)
    assert cells >= {m.label: m.epsilon for m in plain.mechanisms}[UG_CELLS]


def test_what_is_spent_never_depends_on_the_data_and_the_total_is_always_eps():
    """Sizes on both sides of VERY_LOW_SIGNAL, many seeds: both rules fire (not vacuous); the
    selection spends its N share, nothing else, and the release spends eps to the last bit."""
    rules = set()
    for n in (2_000, 3_000, 3_300, 3_600, 5_000, 20_000):
        for seed in range(6):
            ledger = Accountant(Noise.seeded(seed), Cost(0.1))
            rel = build_auto(_spread(n, seed=seed), 0.1, ledger)
            sel = rel.info["selection"]
            rules.add(sel.rule)
            assert sel.epsilon == pytest.approx(SELECTION_SHARE * 0.1, rel=1e-12)
            assert Cost.of(rel.mechanisms).epsilon == pytest.approx(0.1, rel=1e-12)
            assert ledger.spent.epsilon == pytest.approx(0.1, rel=1e-12)
    assert rules == {"very-low-signal", "best-on-average"}


def test_neighbours_same_seed_spend_the_same_and_the_choice_is_post_processing():
    """Differencing as an attacker would: add one point, same seed. The noisy N moves by exactly
    the sensitivity (1), the epsilon spent never depends on the data, and the rule is what
    `choose` gives on the released noisy N."""
    F = _spread(9_000, seed=1)
    G = F.copy()
    G[10, 10] += 1
    for seed in range(20):
        a = build_auto(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1))).info["selection"]
        b = build_auto(G, 0.1, Accountant(Noise.seeded(seed), Cost(0.1))).info["selection"]
        assert b.features.noisy_n - a.features.noisy_n == pytest.approx(1.0, abs=1e-9)
        assert a.epsilon == b.epsilon == pytest.approx(SELECTION_SHARE * 0.1)
        for sel in (a, b):
            assert sel.rule == choose(sel.features).name


def test_person_unit_scales_the_signal_and_the_sensitivity():
    """5,000 points at eps 0.5: about 2,500 points per unit of noise for points (PrivTree), 250
    for persons with at most 10 points each (UG), the noisy N with sensitivity 10."""
    F = _spread(5_000)
    unit = PersonUnit("uid", 10)
    as_points = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5)))
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5)), unit=unit)
    sel = rel.info["selection"]
    drawn = {m.label: m for m in rel.mechanisms}
    assert drawn[N_LABEL].sensitivity == 10
    assert sel.features.signal == pytest.approx(
        max(sel.features.noisy_n, 0) * 0.5 * (1 - SELECTION_SHARE) / 10
    )
    assert as_points.method == "privtree" and rel.method == "ug"


def test_a_declared_public_size_spends_nothing_and_is_privtree_alone_to_the_last_bit():
    """With a declared N nothing is spent on choosing: at enough signal Recommended is PrivTree
    alone with the whole eps (same seed, same draws, same release)."""
    F = gaussian_matrix(40_000, 10, seed=5, grid=128)
    rel = build_auto(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)), public_n=40_000)
    alone = build_privtree(F, 0.5, Accountant(Noise.seeded(3), Cost(0.5)))
    sel = rel.info["selection"]
    assert _auto_labels(rel) == [] and sel.epsilon == 0.0 and sel.public_n
    assert sel.features.noisy_n == 40_000 and rel.method == "privtree"
    assert "declared public number" in " ".join(rel.info["selection_reasons"])
    np.testing.assert_array_equal(rel.leaves, alone.leaves)
    np.testing.assert_array_equal(rel.values, alone.values)
    small = build_auto(_spread(500), 0.5, Accountant(Noise.seeded(3), Cost(0.5)), public_n=500)
    assert small.method == "ug" and small.info["selection"].epsilon == 0.0
    assert sum(v for k, v in small.epsilon.items() if k != "total") == pytest.approx(0.5)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"public_n": -1}, "public_n"),
        ({"public_n": float("nan")}, "public_n"),
        ({"n_share": 0.0}, "n_share"),
        ({"n_share": 1.0}, "n_share"),
    ],
)
def test_bad_shares_and_sizes_are_refused_before_any_draw(kw, message):
    ledger = Accountant(Noise.seeded(1), Cost(0.5))
    with pytest.raises(InputError, match=message):
        build_auto(_spread(500), 0.5, ledger, **kw)
    assert ledger.mechanisms == ()
