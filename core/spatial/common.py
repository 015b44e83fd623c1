"""Small formulas shared by HTF and the baselines (spec htf.md §2.2, §2.7, §3.1)."""

from __future__ import annotations

import math

import numpy as np

from core.privacy import Accountant, DiscreteLaplace, Laplace
from core.spatial.unit import POINT, Unit

_EPS = 1e-9


def h_max(ny: int, nx: int) -> int:
    """Depth at which alternating bisection reaches single cells (20 on 1024 x 1024)."""
    return math.ceil(math.log2(ny)) + math.ceil(math.log2(nx))


def tree_height(n_hat: float, eps_tot: float, ny: int, nx: int, c0: float = 10.0) -> int:
    """HTF's height formula (paper Eq. 9-10, floored), clamped to [1, h_max]."""
    arg = n_hat * eps_tot / c0
    h = math.floor(math.log2(arg) + _EPS) if arg >= 2 else 1
    return min(max(h, 1), max(h_max(ny, nx), 1))


def geometric_shares(h: int, eps_data: float) -> np.ndarray:
    """eps_i for heights i = 0..h (Eq. 17): sums to eps_data, eps_{i-1}/eps_i = 2^(1/3)."""
    i = np.arange(h + 1)
    return eps_data * 2.0 ** ((h - i) / 3) * (2 ** (1 / 3) - 1) / (2 ** ((h + 1) / 3) - 1)


def remaining_path_budget(shares: np.ndarray) -> np.ndarray:
    """rem(i) = sum_{j<i} eps_j, computed as a sum so that rem(0) == 0 exactly."""
    return np.concatenate([[0.0], np.cumsum(shares)[:-1]])


def near_equal_edges(n: int, m: int) -> np.ndarray:
    """Edges splitting extent n into m non-empty near-equal intervals: e_j = (2jn + m) // (2m)."""
    if not 1 <= m <= n:
        raise ValueError(f"need 1 <= m <= n, got m={m}, n={n}")
    j = np.arange(m + 1, dtype=np.int64)
    return (2 * j * n + m) // (2 * m)


# Share of ε that the improved and baseline methods spend on the noisy N that sizes their
# structure (grid side, tree height), unless a public size is declared. Why a share and not a
# fixed 1e-4: the sizing rules depend on N through sqrt(N ε) or log2(N ε), so what matters is
# N_hat's RELATIVE error, whose typical size is 1 / (share · N · ε) (Laplace scale over N). A
# fixed 1e-4 gives scale 10,000 whatever ε: at N = 1,000 the grid side swings between 1 and 16.
# With 5 %, N · ε = 100 (1,000 points at ε 0.1, the smallest set worth a histogram) gives a
# typical relative error of 20 % — the side moves by about 10 %, the height by at most one
# level — while the counts keep 95 % of ε (their noise grows by 5 %). At larger N · ε the share
# is more than the sizing needs but costs the same 5 %, a price we accept for one rule that
# holds at every N · ε. A declared public size (`public_n`) spends nothing.
N_SHARE = 0.05


def count_mechanism(label: str, epsilon: float, unit: Unit = POINT, **kw) -> DiscreteLaplace:
    """Integer counts over disjoint cells or nodes: L1 sensitivity K (the unit's point bound)."""
    return DiscreteLaplace(label, sensitivity=unit.max_points, epsilon=float(epsilon), **kw)


def noisy_total(
    F: np.ndarray, eps_n: float, accountant: Accountant, method: str, unit: Unit = POINT
) -> float:
    """N + Laplace(K / eps_n) (`Laplace` mechanism, sensitivity K): methods whose parameters
    depend on N never see the true N."""
    mech = Laplace(
        f"{method}: noisy number of points (sizes the structure)",
        sensitivity=unit.max_points,
        epsilon=float(eps_n),
    )
    return float(mech.draw(accountant, float(np.asarray(F).sum())))


def ceil_tol(x: float) -> int:
    return math.ceil(x - _EPS)


def floor_tol(x: float) -> int:
    return math.floor(x + _EPS)
