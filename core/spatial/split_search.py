"""HTF's split objective (paper Eq. 5-7) and near-optimal split search (Algorithm 1, spec §2.4-2.5).

The objective sums absolute deviations from each part's mean; its sensitivity is < 2
(Theorem 1), so every evaluation is noised with Laplace(2 / eps'') before it steers a choice.
"""

from __future__ import annotations

import numpy as np

from core.privacy import Noise

AXES = ("y", "x")


def objective(Fr: np.ndarray, axis: str, s: int) -> float:
    """o_s = sum_A |F - mu_A| + sum_B |F - mu_B| for the split of `Fr` at offset s along `axis`.

    `axis="y"` cuts between rows s-1 and s (A = first s rows); `"x"` between columns.
    Evaluated in float64 on numpy slices (absolute deviations have no prefix-sum shortcut).
    """
    Ff = np.asarray(Fr, dtype=np.float64)
    if axis == "y":
        A, B = Ff[:s], Ff[s:]
    elif axis == "x":
        A, B = Ff[:, :s], Ff[:, s:]
    else:
        raise ValueError(f"axis must be 'y' or 'x', got {axis!r}")
    if A.size == 0 or B.size == 0:
        raise ValueError(f"offset {s} leaves an empty part")
    return _abs_dev(A) + _abs_dev(B)


def _abs_dev(part: np.ndarray) -> float:
    mu = part.sum() / part.size
    return float(np.abs(part - mu).sum())


def get_split_offset(
    Fr: np.ndarray,
    axis: str,
    eps_level: float,
    T: int,
    noise: Noise,
    evaluated: list[int] | None = None,
) -> int:
    """Algorithm 1, index-exact (spec §2.5): an offset s in [1, L-1] along `axis`.

    Each noisy evaluation gets eps_level / (2T + 1); each offset is noised at most once, so at
    most 2T + 1 evaluations are made. `evaluated`, if given, receives the offsets evaluated
    (in order) — for tests. The 2T + 1 Laplace draws are taken in one vector call (unused
    ones are discarded unseen; discarding noise costs no privacy).
    """
    Ff = np.asarray(Fr, dtype=np.float64)
    L = Ff.shape[0] if axis == "y" else Ff.shape[1]
    if L < 2:
        raise ValueError("a split needs an extent of at least 2 along the axis")
    if L == 2:
        return 1  # one candidate: nothing to choose, no noise drawn
    b = 2.0 * (2 * T + 1) / eps_level
    draws = iter(noise.laplace(b, size=2 * T + 1))
    noisy: dict[int, float] = {}

    def ev(s: int) -> float:
        if s not in noisy:
            noisy[s] = objective(Ff, axis, s) + float(next(draws))
            if evaluated is not None:
                evaluated.append(s)
        return noisy[s]

    lo, hi = 0, L  # node edges: sentinels, never candidates
    k = (lo + hi) // 2
    ev(k)
    for _ in range(T):
        k1 = k - (k - lo + 1) // 2
        k2 = k + (hi - k + 1) // 2
        cand = [k] + [s for s in (k1, k2) if lo < s < hi]
        if len(cand) == 1:
            break  # interval exhausted; the rest of the budget stays unspent
        best = min(cand, key=lambda s: (ev(s), cand.index(s)))  # ties: centre, then k1, then k2
        if best == k:
            lo, hi = k1, k2
        elif best == k1:
            hi, k = k, k1  # simultaneous: hi takes the OLD k
        else:
            lo, k = k, k2
    return k


def exhaustive_split_offset(
    Fr: np.ndarray, axis: str, eps_level: float, noise: Noise, evaluated: list[int] | None = None
) -> int:
    """Optional exhaustive search (paper §4.1.1): every offset 1..L-1 at eps_level/(L-1) each."""
    Ff = np.asarray(Fr, dtype=np.float64)
    L = Ff.shape[0] if axis == "y" else Ff.shape[1]
    if L < 2:
        raise ValueError("a split needs an extent of at least 2 along the axis")
    if L == 2:
        return 1
    offsets = range(1, L)
    vals = np.array([objective(Ff, axis, s) for s in offsets])
    if evaluated is not None:
        evaluated.extend(offsets)
    vals = vals + noise.laplace(2.0 * (L - 1) / eps_level, size=L - 1)
    return int(np.argmin(vals)) + 1
