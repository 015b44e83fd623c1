"""Recommended's third measurement (issue 20, round 5): the noisy number of occupied cells, and
the point-mass rule it feeds (a few hundred heavy places, such as airline route ends, go to
PrivTree; spread data of the same size never does)."""

import numpy as np
import pytest

from core.privacy import Accountant, Cost, Noise
from core.spatial.selection import (
    CELLS_SHARE,
    POINT_MASSES,
    build_auto,
    choose,
    measure_features,
)
from core.spatial.selection_features import CELLS_MARGIN, points_per_cell
from core.spatial.unit import PersonUnit

CELLS_LABEL = "auto: noisy number of occupied cells (method choice)"
GRID = 1024


def _point_masses(n: int, places: int, seed: int = 0) -> np.ndarray:
    """n points on `places` random cells with Zipf-like weights (a few hubs carry most)."""
    rng = np.random.default_rng(seed)
    cells = rng.choice(GRID * GRID, size=places, replace=False)
    w = 1.0 / np.arange(1, places + 1) ** 0.8
    counts = rng.multinomial(n, w / w.sum())
    F = np.zeros(GRID * GRID, dtype=np.int64)
    F[cells] = counts
    return F.reshape(GRID, GRID)


def _spread(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    F = np.zeros((GRID, GRID), dtype=np.int64)
    np.add.at(F, (rng.integers(0, GRID, n), rng.integers(0, GRID, n)), 1)
    return F


def test_a_few_hundred_heavy_places_go_to_privtree_and_spread_points_never_do():
    """17,700 points on 320 places at eps 1 (the airline route ends' size): 55 points per
    occupied cell, read as at least 15 in nearly every draw; the same number of spread points
    has about 1 per cell and never fires the rule (the margin only lowers the estimate)."""
    masses, spread = _point_masses(17_700, 320), _spread(17_700)
    picks = {"masses": [], "spread": []}
    for seed in range(100):
        for name, F in (("masses", masses), ("spread", spread)):
            f = measure_features(F, 1.0, Accountant(Noise.seeded(seed), Cost(1.0))).features
            picks[name].append(choose(f).name)
    assert picks["masses"].count("point-masses") >= 90
    assert "point-masses" not in picks["spread"]


def test_the_rule_cannot_fire_at_low_signal_whatever_the_data():
    """points_per_cell <= noisy N / (3 scales) = noisy N x CELLS_SHARE x eps / (3K): with every
    point in one cell (the most extreme point mass) and N x eps / K = 1,500, it stays below 15
    in every draw, as the docstring's bound says."""
    F = np.zeros((64, 64), dtype=np.int64)
    F[10, 10] = 15_000
    for seed in range(200):
        m = measure_features(F, 0.1, Accountant(Noise.seeded(seed), Cost(0.1)))
        bound = max(m.features.noisy_n, 0) * CELLS_SHARE * 0.1 / CELLS_MARGIN
        assert m.features.points_per_cell <= bound + 1e-9
        assert m.features.points_per_cell < POINT_MASSES


def test_points_per_cell_errs_towards_spread():
    """The occupied-cell count is raised by CELLS_MARGIN noise scales before dividing, so the
    estimate is below the true N per cell unless the noise exceeds 3 scales (e^-3 / 2 = 2.5 % of
    draws for Laplace): checked over 4,000 secure draws."""
    n, cells = 17_733, 321
    m = measure_features(_point_masses(n, cells), 1.0, Accountant(Noise.seeded(0)))
    scale = m.noise_scales["occupied_cells"]
    assert scale == pytest.approx(1 / (CELLS_SHARE * 1.0))
    rng = np.random.default_rng(11)
    noisy_cells = cells + rng.laplace(0, scale, 4_000)
    above = np.mean([points_per_cell(n, c, scale) > n / cells for c in noisy_cells])
    assert above < 0.04  # expected 0.025; a margin of 0 would give about 0.5


def test_one_person_moves_the_occupied_cells_by_at_most_k_with_the_same_seed():
    """Differencing: a person with K = 6 points in 6 empty cells (the most they can change) is
    added; with the same seed the noisy count moves by exactly 6, and its mechanism's
    sensitivity is 6, so the Laplace scale covers it."""
    unit = PersonUnit("uid", 6)
    F = _point_masses(20_000, 200, seed=3)  # 3,000 points per unit of noise: 16 x 16 band
    G = F.copy()
    empty = np.argwhere(F == 0)[:6]
    G[empty[:, 0], empty[:, 1]] += 1
    for seed in range(10):
        la, lb = Accountant(Noise.seeded(seed)), Accountant(Noise.seeded(seed))
        a = measure_features(F, 1.0, la, unit).features
        b = measure_features(G, 1.0, lb, unit).features
        assert a.noisy_cells is not None and b.noisy_cells is not None
        assert b.noisy_cells - a.noisy_cells == pytest.approx(6.0, abs=1e-9)
        mech = {m.label: m for m in la.mechanisms}[CELLS_LABEL]
        assert mech.sensitivity == 6 and mech.scale == pytest.approx(6 / (CELLS_SHARE * 1.0))


def test_the_choice_and_its_reasons_say_how_many_places():
    rel = build_auto(_point_masses(17_700, 320), 1.0, Accountant(Noise.seeded(4), Cost(1.0)))
    sel = rel.info["selection"]
    assert sel.rule == "point-masses" and rel.method == "privtree"
    text = " ".join(rel.info["selection_reasons"])
    assert "cells are occupied" in text and "points per occupied cell" in text
    assert sel.to_dict()["features"]["points_per_cell"] == sel.features.points_per_cell
