"""Uniform: a single leaf over the domain with N + Lap(1/eps) (spec htf.md §3.2)."""

import math

import numpy as np

from core.privacy import Accountant, Noise
from core.spatial.baselines import build_uniform


def test_single_leaf_over_the_whole_domain_noise_free():
    F = np.random.default_rng(0).poisson(2.0, size=(9, 4)).astype(np.int64)
    rel = build_uniform(F, 1e9, Accountant(Noise.seeded(1)))
    assert rel.leaves.tolist() == [[0, 9, 0, 4]]
    assert rel.values.tolist() == [float(F.sum())]


def test_total_noise_scale():
    eps = 0.5
    F = np.full((4, 4), 3, dtype=np.int64)
    noise = Noise.seeded(77)
    draws = np.array([build_uniform(F, eps, Accountant(noise)).values[0] - 48 for _ in range(4000)])
    q = math.exp(-eps)
    var = 2 * q / (1 - q) ** 2
    assert abs(draws.mean()) < 5 * math.sqrt(var / 4000)
    # relative sd of the sample variance is sqrt(5/4000) = 3.5 %; allow 20 %
    assert abs(draws.var() / var - 1) < 0.20
