"""Noise sources: distribution checks for both modes and the mode rules."""

import math

import numpy as np
import pytest

from core.privacy import Noise


def laplace_cdf(x: np.ndarray, scale: float) -> np.ndarray:
    return np.where(x < 0, 0.5 * np.exp(x / scale), 1 - 0.5 * np.exp(-x / scale))


def ks_statistic(sample: np.ndarray, cdf) -> float:
    x = np.sort(sample)
    n = x.size
    f = cdf(x)
    return float(max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n)))


def test_seeded_laplace_passes_kolmogorov_smirnov():
    scale, n = 2.5, 20_000
    draws = Noise.seeded(7).laplace(scale, size=n)
    d = ks_statistic(draws, lambda x: laplace_cdf(x, scale))
    # 1.63/sqrt(n) is the 1% critical value; a wrong scale (e.g. 2.0) gives D ≈ 0.05 here.
    assert d < 1.63 / math.sqrt(n)


def test_ks_rejects_wrong_scale():
    draws = Noise.seeded(7).laplace(2.0, size=20_000)
    assert ks_statistic(draws, lambda x: laplace_cdf(x, 2.5)) > 1.63 / math.sqrt(20_000)


def test_seeded_mode_is_reproducible_and_labelled():
    a = Noise.seeded(3).laplace(1.0, size=5)
    b = Noise.seeded(3).laplace(1.0, size=5)
    assert np.array_equal(a, b)
    assert Noise.seeded(3).describe() == {
        "mode": "seeded",
        "seed": 3,
        "warning": "reproducible demo mode — not for real releases",
    }


def test_secure_mode_cannot_be_seeded():
    with pytest.raises(ValueError, match="never seeded"):
        Noise("secure", seed=1)
    assert Noise.from_seed(None).is_secure
    assert Noise.secure().describe() == {"mode": "secure"}


def test_secure_laplace_variance_matches_two_scale_squared():
    scale, n = 3.0, 20_000
    draws = Noise.secure().laplace(scale, size=n)
    # Var = 2 b^2 = 18; the sample variance's sd is sqrt((mu4 - sigma^4)/n) = sqrt(5)*18/sqrt(n) ≈ 0.28.
    # A tolerance of 10% (1.8, > 6 sd) always passes for a correct sampler; scale 2.5 would give 12.5.
    assert abs(draws.var() - 2 * scale**2) < 0.1 * 2 * scale**2
    assert abs(draws.mean()) < 0.15


def test_secure_discrete_laplace_gives_integers_with_right_variance():
    scale, n = 3.0, 20_000
    draws = Noise.secure().discrete_laplace(scale, size=n)
    assert draws.dtype == np.int64
    a = math.exp(-1 / scale)
    variance = 2 * a / (1 - a) ** 2  # discrete Laplace variance, ≈ 2b² - 1/6 for large b
    assert abs(draws.var() - variance) < 0.1 * variance


def test_seeded_discrete_laplace_matches_pmf():
    scale, n = 1.5, 50_000
    draws = Noise.seeded(11).discrete_laplace(scale, size=n)
    a = math.exp(-1 / scale)
    for k in (0, 1, -1, 3):
        expected = (1 - a) / (1 + a) * a ** abs(k)
        assert abs(np.mean(draws == k) - expected) < 5 * math.sqrt(expected / n)


def test_add_laplace_keeps_integer_counts_integer():
    noisy = Noise.secure().add_laplace(np.array([10, 20, 30]), 1.0)
    assert np.issubdtype(noisy.dtype, np.integer)
    noisy_f = Noise.seeded(1).add_laplace(np.array([1.5, 2.5]), 1.0)
    assert noisy_f.dtype == np.float64


def test_zero_scale_is_noise_free():
    assert Noise.secure().laplace(0.0) == 0.0
    assert np.all(Noise.seeded(1).discrete_laplace(0.0, size=4) == 0)


@pytest.mark.parametrize("mode", ["secure", "seeded"])
def test_uniform_integers_are_uniform(mode):
    noise = Noise.secure() if mode == "secure" else Noise.seeded(5)
    n, k = 60_000, 6
    draws = noise.integers(k, size=n)
    assert draws.min() >= 0 and draws.max() < k
    counts = np.bincount(draws, minlength=k)
    chi2 = float(((counts - n / k) ** 2 / (n / k)).sum())
    assert chi2 < 25.7  # chi-square(5) at p = 1e-4


def test_integers_accept_one_bound_per_draw():
    bounds = np.array([1, 2, 5, 1000])
    draws = Noise.secure().integers(bounds)
    assert np.all((draws >= 0) & (draws < bounds))
    assert draws[0] == 0


def test_permutation_is_a_permutation():
    for noise in (Noise.secure(), Noise.seeded(2)):
        p = noise.permutation(1000)
        assert sorted(p.tolist()) == list(range(1000))


def test_secure_discrete_laplace_vector_matches_pmf_and_quantiles():
    """200k secure draws in one vector call: int64, pmf at 0/±1/±3 and the quartiles match.

    Each pmf estimate's sd is sqrt(p/n) <= 0.0011; 6 sd is never exceeded by a correct sampler,
    while a sampler with scale off by 10 % moves P(0) by ~0.01 (9 sd).
    """
    scale, n = 2.0, 200_000
    draws = Noise.secure().discrete_laplace(scale, size=n)
    assert draws.dtype == np.int64 and draws.shape == (n,)
    a = math.exp(-1 / scale)
    for k in (0, 1, -1, 3, -3):
        expected = (1 - a) / (1 + a) * a ** abs(k)
        assert abs(np.mean(draws == k) - expected) < 6 * math.sqrt(expected / n)
    # symmetric: the median is 0 and P(X > 0) = P(X < 0) = a / (1 + a)
    assert abs(np.mean(draws > 0) - a / (1 + a)) < 6 * math.sqrt(0.25 / n)
    assert abs(np.mean(draws < 0) - a / (1 + a)) < 6 * math.sqrt(0.25 / n)


def test_lattice_laplace_lives_on_the_lattice_with_laplace_spread():
    """Lattice noise: every value is an integer multiple of the lattice; variance ≈ 2 b²."""
    lattice, scale, n = 2.0**-10, 5.0, 200_000
    for noise in (Noise.secure(), Noise.seeded(4)):
        draws = noise.lattice_laplace(scale, n, lattice)
        steps = draws / lattice
        assert np.array_equal(steps, np.round(steps))
        # Var ≈ 2 b² = 50 (lattice correction < 1e-6); sample-variance sd ≈ sqrt(5) 50 / sqrt(n) = 0.25
        assert abs(draws.var() - 2 * scale**2) < 2.0
        assert abs(draws.mean()) < 0.1
        assert abs(np.median(np.abs(draws)) - scale * math.log(2)) < 0.1


def test_lattice_laplace_zero_scale_and_bad_lattice():
    assert np.all(Noise.secure().lattice_laplace(0.0, 5) == 0)
    with pytest.raises(ValueError, match="lattice"):
        Noise.seeded(1).lattice_laplace(1.0, 5, lattice=0.0)


def test_secure_float_laplace_chunks_are_independent_laplace_draws():
    """The threaded float path (one OpenDP vector call per chunk): every chunk's quartiles sit at
    ±b·ln 2 and no chunk repeats another. A sample quartile's sd is sqrt(p(1-p)/n) / f(q) with
    f(q) = 1/(4b): b·sqrt(3/n) ≈ 0.012·b for 20k draws per chunk, so 0.1·b is 8 sd, while a
    scale off by 25 % moves the quartiles by 0.17·b."""
    from core.privacy import noise as noise_mod

    scale = 4.0
    per_chunk = 20_000
    n = per_chunk * max(noise_mod.DRAW_WORKERS, 2)
    draws = Noise.secure().laplace(scale, size=n)
    assert draws.dtype == np.float64 and draws.shape == (n,)
    chunks = np.array_split(draws, max(noise_mod.DRAW_WORKERS, 2))
    for part in chunks:
        q1, q3 = np.quantile(part, [0.25, 0.75])
        assert abs(q3 - scale * math.log(2)) < 0.1 * scale
        assert abs(q1 + scale * math.log(2)) < 0.1 * scale
    assert not np.array_equal(chunks[0], chunks[1])


def test_order_by_keys_is_lexsort_even_with_many_ties():
    """The fast permutation order equals lexsort (first key, second key, position) exactly; keys
    from tiny ranges force tied runs of every length, including full ties on both keys."""
    from core.privacy.noise import order_by_keys

    rng = np.random.default_rng(11)
    for n, span in ((0, 3), (1, 3), (50, 4), (5000, 40), (5000, 5000), (20_000, 2**62)):
        first = rng.integers(0, span, n).astype(np.uint64)
        second = rng.integers(0, 3, n).astype(np.uint64)
        assert np.array_equal(order_by_keys(first, second), np.lexsort((second, first)))


def test_secure_integers_with_per_draw_bounds_are_uniform_and_reject_correctly():
    """Mixed bounds (chi-square per bound), and bounds just above 2^62, where a quarter of all
    words are rejected and redrawn: every draw stays below its bound and the draws spread
    evenly over it (mean draw / bound = 1/2; sd ≈ 0.002 for 20k draws)."""
    n = 60_000
    bounds = np.tile(np.array([3, 7]), n // 2)
    draws = Noise.secure().integers(bounds)
    for k in (3, 7):
        part = draws[bounds == k]
        assert part.min() >= 0 and part.max() < k
        counts = np.bincount(part, minlength=k)
        expected = part.size / k
        assert float(((counts - expected) ** 2 / expected).sum()) < 30.0  # chi2(k-1), p < 1e-4
    huge = np.full(20_000, 2**62 + 1, dtype=np.int64)
    huge[::2] = 2**62 + 3  # two bounds: the per-draw path
    big = Noise.secure().integers(huge)
    assert np.all((big >= 0) & (big < huge))
    assert abs(np.mean(big / huge) - 0.5) < 0.012
