"""Private method choice (`auto`): its share of epsilon, typed Selection, neighbours, rules."""

import numpy as np
import pytest

from core.privacy import Accountant, Cost, Noise, Overdraw
from core.spatial.selection import (
    LOW_SIGNAL,
    RULES,
    SELECTION_SHARE,
    Features,
    Selection,
    build_auto,
    choose,
    coarse_counts,
    measure_features,
)
from core.spatial.synthetic import gaussian_matrix


@pytest.fixture(scope="module")
def F():
    return gaussian_matrix(30_000, 15, seed=2, grid=128)


def test_selection_share_is_drawn_by_its_mechanisms_and_parts_add_up(F):
    ledger = Accountant(Noise.seeded(1), Cost(0.6))
    rel = build_auto(F, 0.6, ledger)
    sel = rel.info["selection"]
    assert isinstance(sel, Selection) and isinstance(sel.features, Features)
    assert rel.mechanisms == ledger.mechanisms  # the features' and the chosen method's
    auto = [m.epsilon for m in rel.mechanisms if m.label.startswith("auto:")]
    assert sum(auto) == pytest.approx(SELECTION_SHARE * 0.6) == pytest.approx(sel.epsilon)
    assert ledger.spent.epsilon == pytest.approx(0.6, abs=1e-12)
    assert rel.epsilon["total"] == 0.6 and rel.epsilon["selection"] == sel.epsilon
    parts = sum(v for k, v in rel.epsilon.items() if k != "total")
    assert parts == pytest.approx(0.6, abs=1e-12)
    assert rel.method == sel.method and rel.info["requested_method"] == "auto"
    assert sel.epsilon + sel.epsilon_build == pytest.approx(0.6, abs=1e-15)
    d = sel.to_dict()
    assert d["features"]["noisy_n"] == sel.features.noisy_n and d["rule"] == sel.rule


def test_refused_before_any_draw_when_the_budget_does_not_fit(F):
    ledger = Accountant(Noise.seeded(1), Cost(0.5))
    with pytest.raises(Overdraw):
        build_auto(F, 0.6, ledger)
    assert ledger.mechanisms == ()


def test_same_seed_neighbours_move_features_by_at_most_the_sensitivity(F):
    """Add one point: with the same seed, noisy N moves by exactly 1 and exactly one noisy coarse
    count moves by 1 (L1 sensitivity 1 for each measurement); nothing else moves. The noisy
    number of occupied cells moves by 1 when the point lands in an empty cell, else not at all."""
    G = F.copy()
    empty = tuple(np.argwhere(F == 0)[0])
    G[70, 33] += 1
    ma = measure_features(F, 1.0, Accountant(Noise.seeded(7)))
    mb = measure_features(G, 1.0, Accountant(Noise.seeded(7)))
    assert mb.features.noisy_n - ma.features.noisy_n == pytest.approx(1.0, abs=1e-9)
    assert F[70, 33] > 0 and mb.features.noisy_cells == pytest.approx(ma.features.noisy_cells)
    H = F.copy()
    H[empty] += 1
    mh = measure_features(H, 1.0, Accountant(Noise.seeded(7)))
    assert mh.features.noisy_cells - ma.features.noisy_cells == pytest.approx(1.0, abs=1e-9)
    diff = mb.coarse - ma.coarse
    assert np.abs(diff).sum() == 1 and diff.max() == 1
    assert diff[70 * 16 // 128, 33 * 16 // 128] == 1


def test_features_noise_scales_match_the_mechanisms(F):
    ledger = Accountant(Noise.seeded(3))
    m = measure_features(F, 1.0, ledger)
    noisy, scales = m.coarse, m.noise_scales
    eps = {m.label: m.epsilon for m in ledger.mechanisms}
    assert scales["n"] == pytest.approx(1 / eps["auto: noisy N (method choice)"])
    assert scales["coarse_counts"] == pytest.approx(
        1 / eps["auto: noisy coarse counts (method choice)"]
    )
    assert scales["occupied_cells"] == pytest.approx(
        1 / eps["auto: noisy number of occupied cells (method choice)"]
    )
    assert sum(eps.values()) == pytest.approx(SELECTION_SHARE) == pytest.approx(m.epsilon)
    assert noisy.shape == (16, 16)


def test_coarse_counts_partition_the_grid():
    rng = np.random.default_rng(0)
    for shape in [(128, 128), (40, 56), (7, 300)]:
        F = rng.poisson(2.0, size=shape)
        C = coarse_counts(F)
        assert C.shape == (min(16, shape[0]), min(16, shape[1])) and C.sum() == F.sum()


def _features(signal=1e5, top=0.3, n=1e5, occupied=0.5, disp=0.1, per_cell=2.0, quarter=0.6):
    """Features as `measure_features` forms them: below LOW_SIGNAL no occupied-cell count."""
    high = signal >= LOW_SIGNAL
    return Features(
        noisy_n=n,
        signal=signal,
        top_share=top,
        top_quarter=quarter,
        occupied=occupied,
        dispersion=disp,
        noisy_cells=n / per_cell if high else None,
        points_per_cell=per_cell if high else None,
    )


def test_rules_fire_in_order_and_the_last_always_applies():
    names = [r.name for r in RULES]
    assert len(set(names)) == len(names) and RULES[-1].applies(_features())
    for rule in RULES:
        assert rule.condition and rule.method
    # every rule is reachable: some feature vector fires it first
    probes = [
        _features(signal=s, top=t, n=n, occupied=o, disp=d, per_cell=p, quarter=q)
        for s in (10, 100, 500, 1000, 2000, 1e4, 1e5, 1e6)
        for t in (0.05, 0.2, 0.4, 0.6, 0.8, 0.95)
        for n in (1e3, 1e4, 1e5)
        for o in (0.05, 0.7)
        for d in (0.0, 0.1, 0.25, 0.4)
        for p in (1.0, 50.0)
        for q in (0.5, 0.9)
    ]
    probes += [_features(signal=s, top=None, occupied=None, disp=None, quarter=None)
               for s in (10, 200)]  # below VERY_LOW_SIGNAL nothing but N is measured  # fmt: skip
    fired = {choose(f).name for f in probes}
    assert fired == set(names)


def test_auto_on_a_tiny_grid_and_in_secure_mode():
    F = np.random.default_rng(1).poisson(50, size=(8, 8))  # 3,200 points
    rel = build_auto(F, 1.0, Accountant(Noise.secure(), Cost(1.0)))
    assert rel.info["selection"].coarse_grid == (8, 8)
    assert rel.cells_per_leaf().sum() == 64


def test_dispersion_tells_one_cluster_from_several():
    """Same N, same noise: one Gaussian cluster is compact, five clusters are dispersed; the
    rules send the first to DAWA and the second to AG (signal well above the noise)."""
    from core.spatial.synthetic import to_matrix

    one = gaussian_matrix(100_000, 60, seed=3, grid=512)
    rng = np.random.default_rng(5)
    pts = [rng.normal(loc, 15, size=(20_000, 2)) for loc in ((60, 60), (60, 450), (450, 60),
                                                            (450, 450), (256, 256))]  # fmt: skip
    xy = np.clip(np.concatenate(pts), 0, 511.999)
    several = to_matrix(xy[:, 0], xy[:, 1], 512, 512)
    f1 = measure_features(one, 1.0, Accountant(Noise.seeded(1))).features
    f5 = measure_features(several, 1.0, Accountant(Noise.seeded(1))).features
    assert f1.dispersion < 0.2 and f5.dispersion > 0.3
    assert choose(f1).method == "dawa" and choose(f5).method == "ag"


def test_dispersion_is_zero_without_clearly_occupied_cells_and_scale_free():
    from core.spatial.selection import dispersion

    assert dispersion(np.zeros((16, 16)), 5.0) == 0.0
    a = np.zeros((16, 16))
    a[0, 0] = a[15, 15] = 100.0  # two equal masses at opposite corners
    # RMS distance from the midpoint: half the diagonal, 15 * sqrt(2) / 2, over the side 16
    assert dispersion(a, 0.0) == pytest.approx(15 * np.sqrt(2) / 2 / 16)
    b = np.zeros((8, 8))
    b[0, 0] = b[7, 7] = 100.0
    assert dispersion(b, 0.0) == pytest.approx(7 * np.sqrt(2) / 2 / 8)


def test_rules_cover_the_issue_20_candidates_in_order():
    """Round 6. Below 330: UG (nothing measured). Below 1,200 (4 x 4 counts): gathered in one
    part -> DAWA, else AG. From 1,200 (16 x 16 counts): one compact cluster -> PrivTree at very
    high signal, else DAWA; point masses -> PrivTree; several centres at very high signal ->
    DAWA; else AG."""
    cases = [
        (dict(signal=100, quarter=None, top=None, disp=None, occupied=None), "ug"),
        (dict(signal=329, quarter=None, top=None, disp=None, occupied=None), "ug"),
        (dict(signal=300, quarter=0.99), "ug"),  # below 330 the shape does not count
        (dict(signal=500, quarter=0.60), "ag"),
        (dict(signal=500, quarter=0.74), "ag"),
        (dict(signal=500, quarter=0.95), "dawa"),  # held-out set 3's compact Gaussian at eps 0.1
        (dict(signal=1100, quarter=0.60, top=0.80, disp=0.05), "ag"),  # the band reads quarters
        (dict(signal=1100, quarter=0.80), "dawa"),
        (dict(signal=400_000, top=0.80, disp=0.10), "privtree"),
        (dict(signal=50_000, top=0.80, disp=0.10), "dawa"),
        (dict(signal=50_000, top=0.80, disp=0.10, per_cell=50.0), "dawa"),  # compact first
        (dict(signal=20_000, top=0.40, disp=0.30, per_cell=50.0), "privtree"),  # route ends
        (dict(signal=20_000, top=0.40, disp=0.30, per_cell=14.0), "ag"),
        (dict(signal=400_000, top=0.80, disp=0.30), "dawa"),
        (dict(signal=50_000, top=0.80, disp=0.25), "ag"),
        (dict(signal=5000, top=0.30, disp=0.10, quarter=0.95), "ag"),  # quarters: low band only
    ]
    for kw, method in cases:
        assert choose(_features(**kw)).method == method, kw


def test_release_states_its_reasons_in_sentences():
    F = np.zeros((64, 64), dtype=np.int64)
    F[20:30, 20:30] = 50
    rel = build_auto(F, 1.0, Accountant(Noise.seeded(2), Cost(1.0)))
    sel = rel.info["selection"]
    text = " ".join(rel.info["selection_reasons"])
    assert rel.info["selection_reasons"] == list(sel.reasons) == sel.to_dict()["reasons"]
    assert sel.rule in text and "epsilon" in text and text.count(".") >= 4
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
