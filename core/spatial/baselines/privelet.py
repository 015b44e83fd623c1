"""Privelet, simplified unweighted form (Xiao, Wang, Gehrke; spec htf.md §3.8).

Pad F with zeros to powers of two, apply the full 1-D Haar transform (s = a + b, d = a - b,
recursing on the sums) along columns then rows. One point changes S = (1 + log2 ny')(1 + log2 nx')
integer coefficients by +-1, so every coefficient gets discrete Laplace(S/eps_tot); the inverse
transform (post-processing) gives the noisy cells. The original Privelet weights its noise per
coefficient; this variant is labelled "Privelet (unweighted)".
"""

from __future__ import annotations

import math

import numpy as np

from core.privacy import Accountant, DiscreteLaplace
from core.spatial.baselines.inputs import check_epsilon, check_matrix, require
from core.spatial.baselines.rectangles import grid_rects
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

METHOD = "privelet"
LABEL = "Privelet (unweighted)"


def _pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(n)))


def haar_forward(A: np.ndarray, axis: int) -> np.ndarray:
    """Full Haar decomposition along `axis` (length a power of two): [total, coarsest d, ..., finest d]."""
    cur = np.moveaxis(A, axis, 0)
    out = np.empty_like(cur)
    while cur.shape[0] > 1:
        half = cur.shape[0] // 2
        out[half : 2 * half] = cur[0::2] - cur[1::2]
        cur = cur[0::2] + cur[1::2]
    out[0] = cur[0]
    return np.moveaxis(out, 0, axis)


def haar_inverse(C: np.ndarray, axis: int) -> np.ndarray:
    """Inverse of `haar_forward` in float64: a = (s + d)/2, b = (s - d)/2."""
    coef = np.moveaxis(np.asarray(C, dtype=np.float64), axis, 0)
    cur = coef[0:1]
    half = 1
    while half < coef.shape[0]:
        d = coef[half : 2 * half]
        nxt = np.empty((2 * half,) + coef.shape[1:])
        nxt[0::2] = (cur + d) / 2
        nxt[1::2] = (cur - d) / 2
        cur, half = nxt, 2 * half
    return np.moveaxis(cur, 0, axis)


def privelet_sensitivity(ny: int, nx: int) -> int:
    """S = (1 + log2 ny')(1 + log2 nx') for the padded power-of-two sizes (121 on 1024 x 1024)."""
    return (1 + int(math.log2(_pow2(ny)))) * (1 + int(math.log2(_pow2(nx))))


def build_privelet(
    F: np.ndarray, eps_tot: float, accountant: Accountant, *, unit: Unit = POINT
) -> Release:
    """One leaf per cell, row-major (like Identity), values from the noisy Haar coefficients.

    Privacy: the integer coefficient vector has L1 sensitivity S·K (S per point, K points per
    unit); discrete Laplace of scale S·K/eps_tot on every coefficient is eps_tot-DP."""
    F = check_matrix(F)
    check_epsilon(eps_tot)
    require(accountant, METHOD, eps_tot)
    ny, nx = F.shape
    py, px = _pow2(ny), _pow2(nx)
    padded = np.zeros((py, px), dtype=np.int64)
    padded[:ny, :nx] = F
    coef = haar_forward(haar_forward(padded, 0), 1)
    S = privelet_sensitivity(ny, nx)
    coefficients = DiscreteLaplace(
        f"{METHOD}: all Haar coefficients (one vector)",
        sensitivity=S * unit.max_points,
        epsilon=float(eps_tot),
    )
    noisy = coefficients.draw(accountant, coef)
    cells = haar_inverse(haar_inverse(noisy, 1), 0)[:ny, :nx]
    return Release(
        method=METHOD,
        leaves=grid_rects(np.arange(ny + 1), np.arange(nx + 1)),
        values=np.ascontiguousarray(cells).reshape(-1),
        epsilon={"total": eps_tot, "count": eps_tot},
        mechanisms=accountant.mechanisms,
        unit=unit,
        params={"eps_tot": eps_tot},
        info={
            "label": LABEL,
            "cells_per_axis": [ny, nx],
            "sensitivity": S,
            "coefficient_noise_scale": coefficients.scale,
        },
    )
