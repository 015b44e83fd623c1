"""Interval half-widths checked against the distributions they describe."""

import math

import numpy as np

from core.privacy import (
    Noise,
    discrete_laplace_half_width,
    discrete_laplace_tail,
    laplace_half_width,
)


def test_laplace_half_width_is_scale_times_ln20():
    assert math.isclose(laplace_half_width(2.0), 2.0 * math.log(20))
    assert np.allclose(
        laplace_half_width(np.array([1.0, 3.0])), np.array([1.0, 3.0]) * math.log(20)
    )


def test_laplace_half_width_covers_95_percent_of_draws():
    draws = Noise.seeded(1).laplace(4.0, size=40_000)
    coverage = np.mean(np.abs(draws) <= laplace_half_width(4.0))
    assert abs(coverage - 0.95) < 0.005  # binomial sd ≈ 0.0011


def test_discrete_half_width_is_the_smallest_covering_integer():
    for scale in (0.5, 1.0, 2.0, 10.0, 37.5):
        k = discrete_laplace_half_width(scale)
        assert discrete_laplace_tail(scale, k) <= 0.05
        assert k == 0 or discrete_laplace_tail(scale, k - 1) > 0.05


def test_discrete_tail_matches_the_pmf_sum():
    scale, k = 2.0, 3
    a = math.exp(-1 / scale)
    pmf = [(1 - a) / (1 + a) * a ** abs(j) for j in range(-k, k + 1)]
    assert math.isclose(discrete_laplace_tail(scale, k), 1 - sum(pmf))


def test_tiny_scales_need_no_width():
    assert discrete_laplace_half_width(1e-3) == 0  # exp(-1000) underflows to 0.0
    assert discrete_laplace_half_width(0.2) == 0  # P(|X| > 0) = 2e^-5/(1 + e^-5) < 0.05


def test_secure_integer_noise_has_64_bit_range():
    draws = Noise.secure().discrete_laplace(2.0**40, size=50)
    assert np.abs(draws).max() > 2**32  # a 32-bit sampler would saturate at 2^31 - 1
