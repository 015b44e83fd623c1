"""The bounds helper: one DiscreteLaplace over disjoint log bins, sensitivity 1 per unit (shown
by differencing neighbouring datasets under the same seed), bounds that are post-processing of
the noisy counts only, and a clipped share that is what the bounds really clip (within noise)."""

import numpy as np
import pandas as pd
import pytest

from core.errors import InputError
from core.planning.bounds import edges, histogram, measure_bounds, propose, unit_values
from core.privacy import Accountant, Cost, Noise, Overdraw


def draw(values, eps=0.5, seed=3, **kw):
    acc = Accountant(Noise.seeded(seed), Cost(eps))
    return measure_bounds(np.asarray(values, float), eps, acc, column="x", **kw), acc


def test_neighbours_under_the_same_seed_differ_in_one_bin_by_one():
    """The attacker's differencing: with the noise fixed, removing one unit moves exactly one
    bin count by exactly 1, however extreme that unit's value — sensitivity 1, as charged."""
    rng = np.random.default_rng(0)
    values = rng.lognormal(3, 1, 2000)
    for outlier in (1e9, -5e6, 0.5):
        with_it, _ = draw(np.append(values, outlier))
        without, _ = draw(values)
        diff = np.array(with_it.noisy_counts) - np.array(without.noisy_counts)
        assert sorted(np.abs(diff))[-1] == 1 and np.count_nonzero(diff) == 1


def test_one_mechanism_drew_and_it_is_the_charge():
    proposal, acc = draw(np.arange(500.0), eps=0.2)
    (mech,) = acc.mechanisms
    assert mech.sensitivity == 1 and mech.cost.epsilon == pytest.approx(0.2)
    assert proposal.noise_scale == pytest.approx(mech.scale)
    with pytest.raises(Overdraw):
        measure_bounds(np.arange(5.0), 0.5, Accountant(Noise.seeded(1), Cost(0.1)), column="x")


def test_bounds_are_a_function_of_the_noisy_counts_only():
    p, _ = draw(np.random.default_rng(1).lognormal(4, 1, 3000))
    again = propose(np.array(p.noisy_counts), p.scale, p.clip_share, p.noise_scale)
    assert again[:2] == (p.lower, p.upper)


def test_proposed_bounds_clip_about_what_they_say():
    rng = np.random.default_rng(2)
    values = np.concatenate([-rng.lognormal(1, 1, 2000), rng.lognormal(5, 1.5, 20000)])
    shares = []
    for seed in range(20):
        p, _ = draw(values, eps=1.0, seed=seed, clip_share=0.02)
        real = np.mean((values < p.lower) | (values > p.upper))
        assert abs(real - p.clipped_share) <= 4 * p.clipped_share_sd + 1e-9
        shares.append(real)
        assert p.lower < 0 < p.upper and p.upper in edges(1.0)
    assert np.mean(shares) <= 0.05  # asked for 2 %, log bins round outward


def test_histogram_bins_cover_everything():
    counts = histogram(np.array([-1e30, -3.0, -0.5, 0.0, 0.5, 1.0, 3.0, 1e30]), 1.0)
    assert counts.sum() == 8


def test_unit_values_sum_per_unit():
    frame = pd.DataFrame({"u": [1, 1, 2, 3], "x": [1.0, 2.0, None, 4.0]})
    assert sorted(unit_values(frame, "x", "u", "sum")) == [0.0, 3.0, 4.0]
    assert sorted(unit_values(frame, "x", "u", "mean")) == [1.5, 4.0]
    assert sorted(unit_values(frame, "x", None, "sum")) == [0.0, 1.0, 2.0, 4.0]
    with pytest.raises(InputError):
        unit_values(frame, "nosuch", "u", "sum")


def test_too_little_data_is_refused_after_the_charge():
    with pytest.raises(InputError) as err:
        draw([1.0, 2.0], eps=0.01)
    assert "charge stands" in str(err.value)
