"""Private method choice (`auto`, issue 31 round 7): a noisy N, then UG below VERY_LOW_SIGNAL
points per unit of noise and PrivTree (the method best on average) otherwise. Behaviour only:
what is charged, what drew, neighbours, reproducibility, and what concentrated data gets."""

import numpy as np
import pytest

from core.privacy import Accountant, Cost, Noise, Overdraw
from core.spatial.selection import (
    CANDIDATES,
    DEFAULT_METHOD,
    RULES,
    SELECTION_SHARE,
    VERY_LOW_SIGNAL,
    Features,
    Selection,
    build_auto,
    choose,
    measure_features,
)
from core.spatial.synthetic import gaussian_matrix

GRID = 1024


@pytest.fixture(scope="module")
def F():
    return gaussian_matrix(30_000, 15, seed=2, grid=128)


def _point_masses(n: int, places: int, seed: int = 0) -> np.ndarray:
    """n points on `places` random cells with Zipf-like weights (a few hubs carry most): the
    heavy places that round 6's points-per-occupied-cell feature read as spread."""
    rng = np.random.default_rng(seed)
    cells = rng.choice(GRID * GRID, size=places, replace=False)
    w = 1.0 / np.arange(1, places + 1) ** 0.8
    F = np.zeros(GRID * GRID, dtype=np.int64)
    F[cells] = rng.multinomial(n, w / w.sum())
    return F.reshape(GRID, GRID)


def _line(n: int, seed: int = 0) -> np.ndarray:
    """n points along one diagonal line (a track or a boundary)."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, GRID - 1, n).astype(int)
    F = np.zeros((GRID, GRID), dtype=np.int64)
    np.add.at(F, (t, (t + rng.integers(-2, 3, n)).clip(0, GRID - 1)), 1)
    return F


def test_selection_share_is_drawn_by_its_mechanism_and_parts_add_up(F):
    ledger = Accountant(Noise.seeded(1), Cost(0.6))
    rel = build_auto(F, 0.6, ledger)
    sel = rel.info["selection"]
    assert isinstance(sel, Selection) and isinstance(sel.features, Features)
    assert rel.mechanisms == ledger.mechanisms  # the noisy N's and the chosen method's
    auto = [m for m in rel.mechanisms if m.label.startswith("auto:")]
    assert [m.label for m in auto] == ["auto: noisy N (method choice)"]
    assert auto[0] is rel.mechanisms[0]  # drawn first, before the choice
    assert auto[0].epsilon == pytest.approx(SELECTION_SHARE * 0.6) == pytest.approx(sel.epsilon)
    assert sel.noise_scales == {"n": pytest.approx(auto[0].scale)}
    assert ledger.spent.epsilon == pytest.approx(0.6, abs=1e-12)
    assert rel.epsilon["total"] == 0.6 and rel.epsilon["selection"] == sel.epsilon
    parts = sum(v for k, v in rel.epsilon.items() if k != "total")
    assert parts == pytest.approx(0.6, abs=1e-12)
    assert Cost.of(rel.mechanisms).epsilon == pytest.approx(0.6)  # what drew is what is charged
    assert rel.method == sel.method and rel.info["requested_method"] == "auto"
    assert sel.epsilon + sel.epsilon_build == pytest.approx(0.6, abs=1e-15)
    d = sel.to_dict()
    assert d["features"]["noisy_n"] == sel.features.noisy_n and d["rule"] == sel.rule


def test_refused_before_any_draw_when_the_budget_does_not_fit(F):
    ledger = Accountant(Noise.seeded(1), Cost(0.5))
    with pytest.raises(Overdraw):
        build_auto(F, 0.6, ledger)
    assert ledger.mechanisms == ()


def test_seeded_runs_are_reproducible(F):
    a = build_auto(F, 0.3, Accountant(Noise.seeded(11), Cost(0.3)))
    b = build_auto(F, 0.3, Accountant(Noise.seeded(11), Cost(0.3)))
    assert a.info["selection"] == b.info["selection"]
    np.testing.assert_array_equal(a.leaves, b.leaves)
    np.testing.assert_array_equal(a.values, b.values)


def test_same_seed_neighbours_move_noisy_n_by_the_sensitivity_and_spend_the_same(F):
    G = F.copy()
    G[70, 33] += 1
    ma = measure_features(F, 1.0, Accountant(Noise.seeded(7)))
    mb = measure_features(G, 1.0, Accountant(Noise.seeded(7)))
    assert mb.features.noisy_n - ma.features.noisy_n == pytest.approx(1.0, abs=1e-9)
    assert ma.epsilon == mb.epsilon == pytest.approx(SELECTION_SHARE)


def test_rules_fire_in_order_and_each_is_reachable():
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names)
    assert all(r.condition and r.method for r in RULES)
    assert RULES[-1].method == DEFAULT_METHOD == "privtree" and RULES[-1].applies(Features(0, 0))
    fired = {
        choose(Features(s, s)).name for s in (0, 10, VERY_LOW_SIGNAL - 1, VERY_LOW_SIGNAL, 1e7)
    }
    assert fired == set(names)
    assert choose(Features(1e6, VERY_LOW_SIGNAL - 1)).method == "ug"
    assert choose(Features(1e6, VERY_LOW_SIGNAL)).method == DEFAULT_METHOD
    assert "ag" not in CANDIDATES  # AG lost 2-13x on concentrated data: never chosen blind


@pytest.mark.parametrize(
    "data", [lambda: _point_masses(20_000, 300), lambda: _line(20_000)], ids=["places", "line"]
)
def test_concentrated_data_at_high_signal_goes_to_privtree_never_ag(data):
    """Round 6 sent a few hundred heavy places and lines to AG (1.4-2.2x behind PrivTree on
    unseen data); round 7 builds PrivTree there in every seed."""
    F = data()
    picks = {build_auto(F, 1.0, Accountant(Noise.seeded(s), Cost(1.0))).method for s in range(10)}
    assert picks == {"privtree"}


def test_auto_on_a_tiny_grid_and_in_secure_mode():
    F = np.random.default_rng(1).poisson(50, size=(8, 8))  # 3,200 points
    rel = build_auto(F, 1.0, Accountant(Noise.secure(), Cost(1.0)))
    assert rel.method in CANDIDATES
    assert rel.cells_per_leaf().sum() == 64


def test_release_states_its_reasons_in_sentences():
    F = np.zeros((64, 64), dtype=np.int64)
    F[20:30, 20:30] = 50
    rel = build_auto(F, 1.0, Accountant(Noise.seeded(2), Cost(1.0)))
    sel = rel.info["selection"]
    text = " ".join(rel.info["selection_reasons"])
    assert rel.info["selection_reasons"] == list(sel.reasons) == sel.to_dict()["reasons"]
    assert sel.rule in text and "epsilon" in text and text.count(".") >= 3
    assert f"{sel.epsilon:.3g}" in text and f"{sel.epsilon_build:.3g}" in text


def test_the_release_record_carries_the_reasons():
    from core.spatial.grid import Grid
    from core.spatial.record import location_artefact

    F = np.zeros((32, 32), dtype=np.int64)
    F[5:9, 5:9] = 30
    rel = build_auto(F, 1.0, Accountant(Noise.seeded(4), Cost(1.0)))
    art = location_artefact(rel, Grid(32, 32, (0.0, 0.0, 1.0, 1.0)))
    assert art.choice is not None and list(art.choice.reasons) == list(
        rel.info["selection"].reasons
    )
