"""Private choice of the location-histogram method ("Recommended (private choice)", method `auto`).

Beyond the paper; in the spirit of Pythia (Kotsogiannis et al., SIGMOD 2017): a small share of
the release's epsilon buys public-safe features of the data (two discrete Laplace mechanisms); fixed rules (derived from
the benchmark grid in `bench/htf_mre.py --selection-grid`, see docs/benchmarks/htf.md) pick a
method from those noisy features and the public parameters; the chosen method is built with the
rest of epsilon. The whole release — features, choice and histogram — is eps_tot-DP (sequential
composition: eps_selection + eps_build = eps_tot); the choice is post-processing of the noisy
features, so it costs nothing beyond them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, Cost
from core.spatial.common import count_mechanism, near_equal_edges
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

SELECTION_SHARE = 0.06  # share of eps_tot spent on the features
N_SHARE = 0.5  # of the selection budget: noisy N; the rest: the coarse grid's counts
COARSE = 16  # coarse grid for the concentration features (at most 16 x 16 cells)
TOP_FRACTION = 1 / 16  # "top cells" = the densest 1/16 of the coarse cells (16 of 256)


@dataclass(frozen=True)
class Features:
    """Noisy, public-safe features (each is post-processing of two Laplace measurements).

    `noisy_n`: N + discrete Laplace(K / eps_n). `signal`: noisy_n x eps_build / K, the number of
    points per unit of count-noise scale the chosen method will have (K: the unit's point bound). `top_share`: share of the noisy
    coarse mass (negatives clipped to 0) held by the densest 1/16 of the coarse cells.
    `occupied`: fraction of coarse cells whose noisy count exceeds 3 noise scales (3K/eps_c) plus 1 %
    of the noisy mean cell count (i.e. clearly non-empty). `dispersion`: over those clearly
    non-empty cells, weighted by their noisy count above that threshold, the RMS distance from
    their centre of mass as a fraction of the coarse grid's side (on the benchmark grid: 0.035-0.28
    for one cluster, above 0.2 only at low signal; 0.20-0.48 for several clusters or spread real
    data; 0 when no cell is clearly non-empty).
    """

    noisy_n: float
    signal: float
    top_share: float
    occupied: float
    dispersion: float = 0.0


@dataclass(frozen=True)
class Rule:
    """One selection rule: when `applies(features)` holds, build `method`."""

    name: str
    method: str
    condition: str  # the condition in words (shown and exported)
    applies: Callable[[Features], bool]


# Ordered: the first rule that applies fires. Derived from the benchmark grid (docs/benchmarks/
# htf.md, "Private method choice"; bench/htf_regret.py, 20 repetitions per cell): 15 point sets
# (single Gaussians and the city mixture at N = 1e4..1e6, GeoNames cities / cities1000 world and
# Europe, US airports, US ZIP centroids) x eps 0.1 / 0.5 / 1.0. There, PrivTree or AG was best in
# every cell. Picking AG where PrivTree wins cost up to 12x (single clusters); the reverse at most
# 1.7x (spread real data) — so PrivTree is the default whenever the features cannot tell.
RULES: tuple[Rule, ...] = (
    Rule(
        "low-signal",
        "privtree",
        "noisy N x eps_build < 1200: the coarse features are mostly noise; PrivTree has the "
        "smaller worst case on the benchmark grid",
        lambda f: f.signal < 1200,
    ),
    Rule(
        "spread",
        "ag",
        "the densest 1/16 of the 16 x 16 coarse cells hold < 37 % of the noisy mass "
        "(points spread over the region, as in real place data)",
        lambda f: f.top_share < 0.37,
    ),
    Rule(
        "very-high-signal",
        "privtree",
        "noisy N x eps_build >= 300,000: PrivTree's adaptive splits resolve even several "
        "clusters better than AG's two fixed levels",
        lambda f: f.signal >= 300_000,
    ),
    Rule(
        "several-clusters",
        "ag",
        "the clearly non-empty coarse cells are dispersed (RMS distance from their centre of "
        "mass >= 0.2 of the grid side, >= 0.3 when noisy N x eps_build < 10,000 because noise "
        "cells inflate it there): several clusters or spread data, not one cluster",
        lambda f: f.dispersion >= (0.3 if f.signal < 10_000 else 0.2),
    ),
    Rule(
        "concentrated",
        "privtree",
        "otherwise (mass concentrated in one compact cluster)",
        lambda f: True,
    ),
)


@dataclass(frozen=True)
class Selection:
    """What `auto` chose and why: all of it is public (noisy features + public parameters)."""

    method: str
    rule: str
    condition: str
    epsilon: float  # spent on the features (part of the release's total)
    epsilon_build: float  # left for the chosen method
    coarse_grid: tuple[int, int]
    noise_scales: dict[str, float]  # Laplace scale of each feature measurement
    features: Features

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "rule": self.rule,
            "condition": self.condition,
            "epsilon": self.epsilon,
            "epsilon_build": self.epsilon_build,
            "coarse_grid": list(self.coarse_grid),
            "noise_scales": dict(self.noise_scales),
            "features": asdict(self.features),
        }


def coarse_counts(F: np.ndarray, coarse: int = COARSE) -> np.ndarray:
    """True counts on a near-equal coarse partition (at most `coarse` x `coarse`) of F's grid."""
    ny, nx = F.shape
    re = near_equal_edges(ny, min(coarse, ny))
    ce = near_equal_edges(nx, min(coarse, nx))
    rows = np.add.reduceat(np.asarray(F, dtype=np.int64), re[:-1], axis=0)
    return np.add.reduceat(rows, ce[:-1], axis=1)


def dispersion(noisy: np.ndarray, thresh: float) -> float:
    """RMS distance of the cells above `thresh` from their centre of mass (weights: noisy count
    minus thresh), as a fraction of the longer side of the coarse grid. Post-processing only."""
    w = np.clip(np.asarray(noisy, dtype=np.float64) - thresh, 0.0, None)
    total = w.sum()
    if total <= 0:
        return 0.0
    r, c = np.indices(w.shape)
    cr, cc = (w * r).sum() / total, (w * c).sum() / total
    rms = math.sqrt(float((w * ((r - cr) ** 2 + (c - cc) ** 2)).sum() / total))
    return rms / max(w.shape)


def measure_features(
    F: np.ndarray,
    eps_sel: float,
    eps_build: float,
    accountant: Accountant,
    unit: Unit = POINT,
) -> tuple[Features, np.ndarray, dict[str, float]]:
    """Spend eps_sel on the features; returns (features, noisy coarse counts, noise scales).

    Privacy (unit: a point, or a person with at most K points; add/remove neighbours): N has
    sensitivity K and gets discrete Laplace(K / eps_n) with eps_n = N_SHARE x eps_sel; the
    coarse cells are disjoint, so the vector of their counts has L1 sensitivity K and gets
    discrete Laplace(K / eps_c) per cell with eps_c = eps_sel - eps_n (parallel composition over
    cells). Total: eps_sel, two `DiscreteLaplace` mechanisms.
    """
    eps_n = N_SHARE * eps_sel
    eps_c = eps_sel - eps_n
    n_mech = count_mechanism("auto: noisy N (method choice)", eps_n, unit)
    coarse = count_mechanism("auto: noisy coarse counts (method choice)", eps_c, unit)
    n_hat = float(n_mech.draw(accountant, np.array([int(F.sum())], dtype=np.int64))[0])
    noisy = coarse.draw(accountant, coarse_counts(F)).astype(np.float64)
    pos = np.clip(noisy.reshape(-1), 0.0, None)
    k = max(1, round(TOP_FRACTION * pos.size))
    mass = pos.sum()
    top = np.sort(pos)[::-1][:k].sum() / mass if mass > 0 else 0.0
    thresh = 3.0 * coarse.scale + 0.01 * max(n_hat, 0.0) / pos.size
    feats = Features(
        noisy_n=n_hat,
        signal=max(n_hat, 0.0) * eps_build / unit.max_points,
        top_share=float(top),
        occupied=float(np.mean(noisy.reshape(-1) > thresh)),
        dispersion=dispersion(noisy, thresh),
    )
    return feats, noisy, {"n": n_mech.scale, "coarse_counts": coarse.scale}


def choose(features: Features) -> Rule:
    """The first rule of RULES that applies (post-processing: no budget)."""
    for rule in RULES:
        if rule.applies(features):
            return rule
    raise AssertionError("the last rule always applies")


def build_auto(
    F: np.ndarray,
    eps_tot: float,
    accountant: Accountant,
    *,
    unit: Unit = POINT,
    share: float = SELECTION_SHARE,
) -> Release:
    """Recommended (private choice): noisy features, a rule, then the chosen method.

    Privacy: eps_tot-DP for the unit (a point, or a person with at most K points; add/remove). eps_sel = share x eps_tot buys the features
    (`measure_features`); the chosen method is built with eps_build = eps_tot - eps_sel and states
    its own mechanisms; sequential composition gives eps_sel + eps_build = eps_tot. The returned
    Release's `epsilon` has a "selection" part next to the chosen method's parts (they add up to
    "total") and `info["selection"]` holds the typed `Selection`.
    """
    from core.spatial.methods import LABELS as LABELS_FOR_AUTO  # the registry imports this module
    from core.spatial.methods import get_method

    if not (eps_tot > 0 and math.isfinite(eps_tot)):
        raise InputError(f"epsilon must be a positive number, got {eps_tot}.")
    if not 0 < share < 1:
        raise InputError(f"the selection share must be in (0, 1), got {share}.")
    F = np.asarray(F)
    if F.ndim != 2 or not np.issubdtype(F.dtype, np.integer):
        raise ValueError("F must be a 2-D integer frequency matrix")
    accountant.require(Cost(float(eps_tot)), "auto (features + the chosen method)")
    eps_sel = share * eps_tot
    eps_build = eps_tot - eps_sel
    feats, noisy, scales = measure_features(F, eps_sel, eps_build, accountant, unit)
    rule = choose(feats)
    rel = get_method(rule.method)(F, eps_build, accountant, unit=unit)
    selection = Selection(
        method=rule.method,
        rule=rule.name,
        condition=rule.condition,
        epsilon=eps_sel,
        epsilon_build=eps_build,
        coarse_grid=tuple(int(v) for v in noisy.shape),
        noise_scales=scales,
        features=feats,
    )
    parts = {k: v for k, v in rel.epsilon.items() if k != "total"}
    rel.epsilon = {"total": float(eps_tot), "selection": eps_sel, **parts}
    chosen_label = rel.info.get("label") or LABELS_FOR_AUTO.get(rel.method, rel.method)
    rel.mechanisms = accountant.mechanisms  # the features' mechanisms and the chosen method's
    rel.info = {
        **rel.info,
        "selection": selection,
        "requested_method": "auto",
        "label": f"Recommended (private choice): {chosen_label}",
    }
    # in params too, so every export's metadata carries the choice, its features and its rule
    rel.params = {
        **rel.params,
        "eps_tot": float(eps_tot),
        "selection_share": share,
        "selection": selection.to_dict(),
    }
    return rel
