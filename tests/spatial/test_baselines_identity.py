"""Identity: one leaf per cell, F + discrete Laplace(1/eps) (spec htf.md §3.2)."""

import math

import numpy as np

from core.privacy import Accountant, Noise
from core.spatial.baselines import build_identity


def discrete_laplace_var(scale: float) -> float:
    """Variance of the two-sided geometric with P(k) ∝ exp(-|k|/scale) (-> 2 scale^2 as scale grows)."""
    q = math.exp(-1.0 / scale)
    return 2 * q / (1 - q) ** 2


def test_noise_free_limit_is_exact_and_row_major():
    F = np.random.default_rng(0).poisson(3.0, size=(7, 5)).astype(np.int64)
    rel = build_identity(F, 1e9, Accountant(Noise.seeded(1)))
    assert np.array_equal(rel.values.reshape(7, 5), F)
    r, c = np.divmod(np.arange(35), 5)
    assert np.array_equal(rel.leaves, np.stack([r, r + 1, c, c + 1], axis=1))


def test_cell_noise_has_laplace_scale_one_over_eps():
    eps = 0.2
    F = np.zeros((200, 200), dtype=np.int64)
    rel = build_identity(F, eps, Accountant(Noise.seeded(123)))
    noise = rel.values
    assert np.array_equal(noise, np.round(noise))  # integer (discrete Laplace) counts
    var = discrete_laplace_var(1 / eps)
    assert abs(var - 2 / eps**2) / (2 / eps**2) < 0.01  # the spec's 2/eps^2, up to discreteness
    n = noise.size
    assert abs(noise.mean()) < 5 * math.sqrt(var / n)
    # sample variance of Laplace noise has relative sd sqrt(5/n) = 1.1 % here; allow 5 %
    assert abs(noise.var() / var - 1) < 0.05
    assert rel.info["count_noise_scale"] == 1 / eps
    (cells,) = rel.mechanisms
    assert cells.epsilon == eps and cells.sensitivity == 1 and cells.scale == 1 / eps
