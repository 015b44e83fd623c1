"""Accuracy of Laplace noise: two-sided confidence-interval half-widths.

For continuous Laplace(b), P(|X| > t) = exp(-t/b), so the (1 - alpha) half-width is b·ln(1/alpha).
For discrete Laplace with P(k) ∝ exp(-|k|/b), with a = exp(-1/b), P(|X| > k) = 2a^(k+1)/(1 + a);
the half-width is the smallest integer k with that tail <= alpha.
"""

from __future__ import annotations

import math

import numpy as np


def laplace_half_width(scale: float | np.ndarray, confidence: float = 0.95):
    """Half-width w with P(|Laplace(scale)| <= w) = confidence."""
    _check_confidence(confidence)
    factor = math.log(1.0 / (1.0 - confidence))
    return np.asarray(scale, dtype=float) * factor if np.ndim(scale) else float(scale) * factor


def discrete_laplace_half_width(scale: float, confidence: float = 0.95) -> int:
    """Smallest integer k with P(|DiscreteLaplace(scale)| <= k) >= confidence."""
    _check_confidence(confidence)
    if scale <= 0:
        return 0
    alpha = 1.0 - confidence
    a = math.exp(-1.0 / scale)
    if 2.0 * a / (1.0 + a) <= alpha:  # even P(|X| > 0) is small enough (covers a == 0 underflow)
        return 0
    # 2a^(k+1)/(1+a) <= alpha  <=>  k + 1 >= ln(alpha(1+a)/2) / ln(a)
    k = math.ceil(math.log(alpha * (1.0 + a) / 2.0) / math.log(a) - 1.0 - 1e-12)
    return max(0, k)


def discrete_laplace_tail(scale: float, k: int) -> float:
    """P(|X| > k) for discrete Laplace(scale), k >= 0."""
    if scale <= 0:
        return 0.0
    a = math.exp(-1.0 / scale)
    return 2.0 * a ** (k + 1) / (1.0 + a)


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
