"""Private choice of the location-histogram method ("Recommended (private choice)", method `auto`).

Beyond the paper; in the spirit of Pythia (Kotsogiannis et al., SIGMOD 2017): a small share of
the release's epsilon buys public-safe features of the data (two discrete Laplace mechanisms); fixed rules (derived from
design data sets of bench/htf_regret.py and checked on held-out ones, see docs/benchmarks/htf.md)
pick one of UG, AG, PrivTree and DAWA from those noisy features and the public parameters; the chosen method is built with the
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
from core.spatial.baselines import BASELINES
from core.spatial.baselines import LABELS as BASELINE_LABELS
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


# Ordered: the first rule that applies fires. Issue 20 (docs/benchmarks/htf.md, "Issue 20"),
# candidates UG, AG, PrivTree and DAWA (core/spatial/baselines/dawa.py). Round 1 fitted rules on
# the DESIGN sets (bench/htf_datasets.py point_sets + holdout_sets: single Gaussians and the city
# mixture at N = 1e4..1e6, GeoNames cities world / Europe, US airports, US ZIP centroids; eps 0.1
# and 1) and ran them once on held-out set 1 (heldout_sets: EPR check-ins, taxi ends, world
# airports, African cities, two GPS tracks): median regret 1.14, worst 1.61 — AG won 11 of its 12
# cells, and the round-1 rules had sent mobility-like data (one dense centre or hubs) to DAWA.
# Round 2 (these rules) refitted on design + held-out set 1 and were then run once on held-out
# set 2 (heldout2_sets), which no rule ever saw. What the data said: a tree method only where the
# coarse grid shows ONE compact cluster (PrivTree at very high signal, DAWA otherwise); DAWA at
# very high signal (its buckets follow several dense centres); AG everywhere else; UG for very low
# signal on spread data. Below noisy N x eps_build = 1,200 the 16 x 16 features are mostly noise:
# DAWA there has the smallest worst case (AG costs 2.4-4x on a single cluster, UG 9x).
SPREAD_TOP_SHARE = 0.37
COMPACT_TOP_SHARE = 0.6
COMPACT_DISPERSION = 0.17
RULES: tuple[Rule, ...] = (
    Rule(
        "very-low-signal-spread",
        "ug",
        "noisy N x eps_build < 600 and the densest 1/16 of the coarse cells hold < 37 % of the "
        "noisy mass: too few points per unit of noise for any adaptive structure, and the mass "
        "is spread, so the plain uniform grid is as good as any and cannot go badly wrong",
        lambda f: f.signal < 600 and f.top_share < SPREAD_TOP_SHARE,
    ),
    Rule(
        "low-signal",
        "dawa",
        "noisy N x eps_build < 1,200: the coarse features are mostly noise; DAWA, which merges "
        "flat regions and splits only where the counts vary, has the smallest worst case there",
        lambda f: f.signal < 1200,
    ),
    Rule(
        "one-compact-cluster-very-high-signal",
        "privtree",
        "the densest 1/16 of the coarse cells hold >= 60 % of the noisy mass, close together "
        "(dispersion < 0.17 of the side), and noisy N x eps_build >= 300,000: PrivTree's "
        "quadtree resolves one dense cluster deepest",
        lambda f: (
            f.top_share >= COMPACT_TOP_SHARE
            and f.dispersion < COMPACT_DISPERSION
            and f.signal >= 300_000
        ),
    ),
    Rule(
        "one-compact-cluster",
        "dawa",
        "the densest 1/16 of the coarse cells hold >= 60 % of the noisy mass, close together "
        "(dispersion < 0.17 of the side): one compact cluster, which DAWA's data-dependent "
        "buckets follow closely",
        lambda f: f.top_share >= COMPACT_TOP_SHARE and f.dispersion < COMPACT_DISPERSION,
    ),
    Rule(
        "very-high-signal",
        "dawa",
        "noisy N x eps_build >= 250,000 with several dense centres: DAWA's buckets follow them "
        "more finely than AG's two fixed levels",
        lambda f: f.signal >= 250_000,
    ),
    Rule(
        "spread-or-several-clusters",
        "ag",
        "otherwise: the points are spread over the region or sit in several clusters, as in "
        "real place and mobility data, where AG's two-level grid was best",
        lambda f: True,
    ),
)
CANDIDATES = tuple(dict.fromkeys(r.method for r in RULES))


def reasons(features: Features, rule: Rule, eps_sel: float, eps_build: float, k: int) -> tuple:
    """The choice in plain sentences (shown by pages and reports; all public: noisy features)."""
    unit = "points" if k == 1 else f"points (each person counted with at most {k})"
    return (
        f"Recommended spent epsilon {eps_sel:.3g} of the release on two noisy measurements: "
        f"the number of {unit} (about {max(features.noisy_n, 0):,.0f}) and a 16 x 16 grid of "
        "counts.",
        f"With the rest, epsilon {eps_build:.3g}, the histogram has about "
        f"{features.signal:,.0f} points per unit of noise, and the densest 1/16 of the coarse "
        f"cells hold {features.top_share:.0%} of the noisy mass (dispersion "
        f"{features.dispersion:.2f} of the grid side).",
        f"It built {rule.method.upper() if rule.method in ('ug', 'ag') else rule.method} by the "
        f"rule '{rule.name}': {rule.condition}.",
        f"The candidates were {', '.join(CANDIDATES)}; the rules come from a benchmark of "
        "design data sets and were checked on held-out ones (docs/benchmarks/htf.md).",
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
    reasons: tuple[str, ...] = ()  # the choice in plain sentences

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "rule": self.rule,
            "condition": self.condition,
            "epsilon": self.epsilon,
            "epsilon_build": self.epsilon_build,
            "coarse_grid": list(self.coarse_grid),
            "noise_scales": dict(self.noise_scales),
            "reasons": list(self.reasons),
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
    rel = BASELINES[rule.method](F, eps_build, accountant, unit=unit)  # UG, AG, PrivTree, DAWA
    selection = Selection(
        method=rule.method,
        rule=rule.name,
        condition=rule.condition,
        epsilon=eps_sel,
        epsilon_build=eps_build,
        coarse_grid=tuple(int(v) for v in noisy.shape),
        noise_scales=scales,
        features=feats,
        reasons=reasons(feats, rule, eps_sel, eps_build, unit.max_points),
    )
    parts = {k: v for k, v in rel.epsilon.items() if k != "total"}
    rel.epsilon = {"total": float(eps_tot), "selection": eps_sel, **parts}
    chosen_label = rel.info.get("label") or BASELINE_LABELS.get(rel.method, rel.method)
    rel.mechanisms = accountant.mechanisms  # the features' mechanisms and the chosen method's
    rel.info = {
        **rel.info,
        "selection": selection,
        "selection_reasons": list(selection.reasons),
        "reasons": list(selection.reasons),  # what core/spatial/record.py's MethodChoice reads
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
