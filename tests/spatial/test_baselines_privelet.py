"""Privelet, unweighted (spec htf.md §3.8)."""

import math

import numpy as np
import pytest

from core.privacy import Accountant, Noise
from core.spatial.baselines import build_privelet
from core.spatial.baselines.privelet import haar_forward, haar_inverse, privelet_sensitivity


def test_sensitivity_anchor():
    assert privelet_sensitivity(1024, 1024) == 121
    assert privelet_sensitivity(5, 3) == (1 + 3) * (1 + 2)  # padded to 8 x 4


@pytest.mark.parametrize(("r", "c"), [(0, 0), (3, 1), (7, 3), (5, 2)])
def test_one_point_changes_exactly_s_coefficients_by_one(r, c):
    e = np.zeros((8, 4), dtype=np.int64)
    e[r, c] = 1
    coef = haar_forward(haar_forward(e, 0), 1)
    assert np.abs(coef).sum() == privelet_sensitivity(8, 4)
    assert set(np.unique(np.abs(coef))) <= {0, 1}


def test_transform_round_trip():
    A = np.random.default_rng(0).integers(0, 50, size=(16, 8))
    coef = haar_forward(haar_forward(A, 0), 1)
    assert np.array_equal(haar_inverse(haar_inverse(coef, 1), 0), A)


def test_noise_free_limit_and_padding():
    F = np.random.default_rng(1).poisson(3.0, size=(5, 3)).astype(np.int64)
    rel = build_privelet(F, 1e9, Accountant(Noise.seeded(1)))
    assert np.allclose(rel.values.reshape(5, 3), F, atol=1e-9)
    assert rel.info["label"] == "Privelet (unweighted)"
    (coefficients,) = rel.mechanisms
    assert coefficients.epsilon == 1e9 and coefficients.sensitivity == privelet_sensitivity(5, 3)


def test_cell_noise_matches_coefficient_scale():
    """On a power-of-two grid the sum of all cells is the total coefficient (the detail
    coefficients cancel), so it carries exactly one discrete Laplace(S/eps) draw."""
    F = np.zeros((16, 16), dtype=np.int64)
    eps = 1.0
    S = privelet_sensitivity(16, 16)
    noise = Noise.seeded(5)
    totals = np.array([build_privelet(F, eps, Accountant(noise)).values.sum() for _ in range(3000)])
    q = math.exp(-eps / S)
    var = 2 * q / (1 - q) ** 2
    assert abs(totals.var() / var - 1) < 0.2  # sd of the sample variance ~ 4 %
