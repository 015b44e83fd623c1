"""The one noisy feature Recommended (`auto`, core/spatial/selection.py) chooses from: N.

Round 7 (issue 31). Issue 20's rounds 1-6 also bought the shape (4 x 4 or 16 x 16 noisy counts
and a noisy number of occupied cells, 5 % of epsilon); on data no rule had seen, those features
read heavy places and lines as spread and sent them to AG, 1.4-2.2x behind PrivTree, while the
share they spent taxed every cell (docs/benchmarks/recommended.md). Round 7 measures only:

1. a noisy N (Laplace, sensitivity K, `N_SELECTION_SHARE` = 1 % of epsilon; nothing with a
   declared public size). It says how many points there are per unit of noise (the signal);
   below `VERY_LOW_SIGNAL` no adaptive structure beats the plain uniform grid, which is then
   built, sized by this same N (post-processing).

Everything here is post-processing of that draw; `measure_features` states the privacy claim.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.privacy import Accountant, Laplace
from core.spatial.unit import POINT, Unit

# 1 % of epsilon: noise scale K / (0.01 eps) on N, so the signal N x eps / K is read to within
# +-100 (one scale) whatever epsilon; around VERY_LOW_SIGNAL (330) a set is routed to the
# other side only within about a third of the threshold, where UG and PrivTree were within
# 1.1x of each other on the benchmark's sets (docs/benchmarks/recommended.md). The share is the
# whole price of choosing: about 1 % of PrivTree's error where PrivTree is built.
N_SELECTION_SHARE = 0.01
SELECTION_SHARE = N_SELECTION_SHARE  # spent on choosing at most
# Points per unit of noise (noisy N x (1 - N_SELECTION_SHARE) x eps / K) below which the plain
# uniform grid is built. Issue 20, round 5: on the benchmark's 20-repetition runs UG was best or
# within 1.05x below it on 7 of 8 real cells. Issue 31 (round 7): on the 11 cells below it of
# issue 20's 20-repetition runs PrivTree's MRE was 0.83-1.45x UG's (geometric mean 1.13x; UG
# ahead in 9), and 1.27x in the 5-repetition run of bench/recommended_regret.py (7 cells).
VERY_LOW_SIGNAL = 330


@dataclass(frozen=True)
class Features:
    """Noisy, public-safe features (post-processing of the Laplace measurement).

    `noisy_n`: N + Laplace(K / eps_n), or the declared public size. `signal`: noisy_n x
    (eps - eps_n) / K, the points per unit of count-noise scale left for the histogram
    (K: the unit's point bound)."""

    noisy_n: float
    signal: float


@dataclass(frozen=True)
class Measured:
    """What the measurement gave: the features, each measurement's noise scale, the epsilon
    spent."""

    features: Features
    noise_scales: dict[str, float]
    epsilon: float


def measure_features(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    unit: Unit = POINT,
    *,
    public_n: float | None = None,
    n_share: float = N_SELECTION_SHARE,
) -> Measured:
    """The noisy N (or the declared public size) and the signal read from it.

    Privacy (unit: a point, or a person with at most K points; add/remove neighbours): N has
    sensitivity K and gets Laplace(K / eps_n) with eps_n = n_share x eps_tot (a `Laplace`
    mechanism on `accountant`, so it is charged and composed with the chosen method's
    mechanisms); none with a declared `public_n` (eps_n = 0). Spent: eps_n, fixed before any
    draw, so the caller builds the chosen method with eps_tot - eps_n and the release is
    eps_tot-DP (sequential composition; the choice is post-processing of the noisy N).
    """
    k = unit.max_points
    F = np.asarray(F)
    if public_n is None:
        eps_n = n_share * eps_tot
        n_mech = Laplace("auto: noisy N (method choice)", sensitivity=k, epsilon=eps_n)
        n_hat = float(n_mech.draw(accountant, float(F.sum())))
        scales = {"n": n_mech.scale}
    else:
        eps_n, n_hat, scales = 0.0, float(public_n), {}
    signal = max(n_hat, 0.0) * (eps_tot - eps_n) / k
    return Measured(Features(n_hat, signal), scales, eps_n)
