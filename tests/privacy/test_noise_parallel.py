"""Secure discrete Laplace drawn in parallel chunks: same distribution, independent chunks."""

import math

import numpy as np
import pytest

import core.privacy.noise as noise_mod
from core.privacy import Noise


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_chunked_draws_have_the_discrete_laplace_distribution(monkeypatch, workers):
    monkeypatch.setattr(noise_mod, "PARALLEL_MIN_DRAWS", 1000)
    monkeypatch.setattr(noise_mod, "DRAW_WORKERS", workers)
    scale = 4.0
    x = Noise.secure().discrete_laplace(scale, size=(200, 200))
    assert x.shape == (200, 200) and x.dtype == np.int64
    flat = x.reshape(-1)
    # E|X| = 2q / (1 - q^2) with q = exp(-1/scale); std of the sample mean of |X| ~ 5.7 / sqrt(n)
    q = math.exp(-1 / scale)
    assert abs(np.abs(flat).mean() - 2 * q / (1 - q * q)) < 0.15
    assert abs(flat.mean()) < 0.15
    # P(X = 0) = (1 - q) / (1 + q)
    assert abs(np.mean(flat == 0) - (1 - q) / (1 + q)) < 0.015
    # chunks are independent draws, not copies of one another
    halves = np.array_split(flat, 2)
    assert not np.array_equal(halves[0][:1000], halves[1][:1000])
    assert abs(np.corrcoef(halves[0][:19_000], halves[1][:19_000])[0, 1]) < 0.05
