"""The mechanism family: costs and scales derived from one object, draws at that scale, and
accuracy statements that hold on samples (fixed seeds, tolerances a correct sampler passes)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from core.privacy import (
    DRAWING,
    Accountant,
    Cost,
    DiscreteLaplace,
    Exponential,
    Laplace,
    LatticeLaplace,
    Noise,
    NoisyThreshold,
    PPRandomization,
    Recorded,
    from_json,
    same_mechanism,
)

N = 200_000


def seeded(seed: int = 7) -> Accountant:
    return Accountant(Noise.seeded(seed))


def test_cost_and_scale_come_from_the_same_fields():
    m = DiscreteLaplace("cells", sensitivity=2, epsilon=0.5)
    assert m.cost == Cost(0.5) and m.scale == 4.0
    t = NoisyThreshold("selection", sensitivity=3, epsilon=1.5, delta=1e-6, threshold=20)
    assert t.cost == Cost(1.5, 1e-6) and t.scale == 2.0
    e = Exponential("median", sensitivity=1, epsilon=0.1)
    assert e.scale == pytest.approx(20.0) and e.cost == Cost(0.1)
    assert Exponential("m", sensitivity=1, epsilon=0.1, monotone=True).scale == pytest.approx(10)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_bad_epsilon_is_refused(bad):
    with pytest.raises(ValueError):
        DiscreteLaplace("x", sensitivity=1, epsilon=bad)


def test_discrete_laplace_half_width_covers_at_its_rate():
    m = DiscreteLaplace("counts", sensitivity=1, epsilon=0.3)
    z = m.draw(seeded(), np.zeros(N, np.int64))
    assert z.dtype == np.int64
    w = m.half_width(0.95)
    inside = np.mean(np.abs(z) <= w)
    assert 0.95 <= inside <= 0.95 + 0.02  # smallest integer width: coverage just above 95 %
    assert np.mean(np.abs(z) <= w - 1) < 0.95  # and one less is not enough
    # variance of discrete Laplace: 2a / (1 - a)^2 with a = exp(-1/b)
    a = math.exp(-1 / m.scale)
    assert np.var(z) == pytest.approx(2 * a / (1 - a) ** 2, rel=0.03)


def test_discrete_laplace_refuses_floats():
    with pytest.raises(TypeError):
        DiscreteLaplace("x", sensitivity=1, epsilon=1).draw(seeded(), np.array([0.5]))


def test_laplace_and_lattice_half_widths():
    m = Laplace("n", sensitivity=1, epsilon=0.2)
    z = m.draw(seeded(), np.zeros(N))
    assert np.mean(np.abs(z) <= m.half_width(0.9)) == pytest.approx(0.9, abs=0.005)
    assert isinstance(m.draw(seeded(), 3.0), float)
    lat = LatticeLaplace("split", sensitivity=2 + 2**-10, epsilon=0.01, lattice=2**-10)
    v = lat.draw(seeded(), np.full(N, 0.3))
    assert np.allclose(np.round(v / 2**-10), v / 2**-10)  # on the lattice
    assert np.mean(np.abs(v - 0.3) <= lat.half_width(0.95) + 2**-10) >= 0.95


def test_exponential_mechanism_samples_its_distribution():
    u = np.array([0.0, -1.0, -2.0, -4.0])
    m = Exponential("pick", sensitivity=1, epsilon=1.0)
    acct = seeded(3)
    picks = m.draw_many(acct, np.tile(u, (N // 4, 1)))
    freq = np.bincount(picks, minlength=4) / len(picks)
    expected = np.exp(u / m.scale) / np.exp(u / m.scale).sum()
    assert np.allclose(freq, expected, atol=0.006)
    # ragged candidate lists: the same distribution per segment
    seg = np.repeat(np.arange(N // 4), 4)
    chosen = m.draw_segments(acct, np.tile(u, N // 4), seg)
    freq2 = np.bincount(chosen % 4, minlength=4) / len(chosen)
    assert np.allclose(freq2, expected, atol=0.006)


def test_noisy_threshold_survival_matches_samples():
    t = NoisyThreshold("sel", sensitivity=1, epsilon=0.5, delta=1e-5, threshold=12)
    for units in (1, 8, 12, 16):
        noisy, kept = t.draw(seeded(units), np.full(N, units))
        assert kept.mean() == pytest.approx(t.survival(units), abs=4 * math.sqrt(0.25 / N))
        assert np.array_equal(kept, noisy >= 12)


def test_reused_threshold_draws_nothing_new():
    counts = DiscreteLaplace("units", sensitivity=2, epsilon=1)
    t = NoisyThreshold(
        "sel", sensitivity=2, epsilon=0, delta=1e-6, threshold=9, reuses="units", noise_scale=2
    )
    acct = seeded()
    noisy = counts.draw(acct, np.arange(20))
    kept = t.select(acct, noisy)
    assert np.array_equal(kept, noisy >= 9)
    assert acct.spent == Cost(1, 1e-6)
    with pytest.raises(ValueError):
        t.draw(acct, np.arange(3))


def test_pp_randomization_keeps_with_its_exact_retention():
    m = PPRandomization(
        "g1", rho1=Fraction(1, 5), rho2=Fraction(1, 2), retention=Fraction(2, 5), domain_size=4
    )
    acct = Accountant(Noise.seeded(5), rho=m.claim)
    codes = np.zeros(N, np.int64)
    out = m.draw(acct, codes)
    q = (1 - 0.4) / 4
    assert np.mean(out == 0) == pytest.approx(0.4 + q, abs=0.004)
    assert np.mean(out == 3) == pytest.approx(q, abs=0.004)
    assert m.posterior_bound <= m.rho2
    with pytest.raises(ValueError):  # a retention that breaks rho2 cannot even be built
        PPRandomization("g", rho1="1/5", rho2="1/4", retention="9/10", domain_size=2)


def test_rows_read_back_into_the_same_objects():
    family = [
        DiscreteLaplace("a", sensitivity=1, epsilon=0.25),
        Laplace("b", sensitivity=3, epsilon=2, in_place_of=("a",)),
        LatticeLaplace("c", sensitivity=2.5, epsilon=0.1, lattice=0.5),
        Exponential("d", sensitivity=1, epsilon=0.2, monotone=True),
        NoisyThreshold("e", sensitivity=3, epsilon=1, delta=1e-6, threshold=30),
        PPRandomization("f", rho1="1/5", rho2="1/2", retention="1/3", domain_size=3),
    ]
    for m in family:
        back = from_json(m.to_json())
        assert type(back) is type(m) and back == m and same_mechanism(back, m)
    old = from_json({"kind": "htf: counts", "epsilon": 0.5, "delta": 0, "scale": 2.0})
    assert isinstance(old, Recorded) and old.cost == Cost(0.5) and old.scale == 2.0


def test_every_draw_happens_inside_its_mechanism(monkeypatch):
    seen = []
    original = Noise.discrete_laplace

    def spy(self, scale, size=None):
        seen.append((DRAWING.get(), scale))
        return original(self, scale, size)

    monkeypatch.setattr(Noise, "discrete_laplace", spy)
    m = DiscreteLaplace("x", sensitivity=1, epsilon=0.5)
    m.draw(seeded(), np.zeros(3, np.int64))
    assert seen == [(m, 2.0)]
