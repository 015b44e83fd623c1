"""Private choice of the location-histogram method ("Recommended (private choice)", method `auto`).

Beyond the paper; in the spirit of Pythia (Kotsogiannis et al., SIGMOD 2017): shares of the
release's epsilon buy public-safe features of the data (core/spatial/selection_features.py);
fixed rules (derived from design data sets of bench/htf_regret.py and checked on held-out ones,
see docs/benchmarks/htf.md) pick one of UG, AG, PrivTree and DAWA from those noisy features and
the public parameters; the chosen method is built with the rest of epsilon.

Round 6 (issue 20): a noisy N, then the shape with a share set by that noisy N
(core/spatial/selection_features.py):

1. A noisy N (Laplace, sensitivity K, `N_SELECTION_SHARE` of epsilon; nothing with a declared
   public size). It is the same noisy N that UG and AG buy anyway to size their grids, and when
   one of them is chosen it is handed on to size the grid (post-processing), so it costs them
   nothing.
2. Below `VERY_LOW_SIGNAL` points per unit of noise: nothing more; UG with the rest, which is
   then UG alone (the same N, the same grid, the same epsilon for its cells).
3. Below `LOW_SIGNAL`: 4 x 4 noisy counts. A cluster still fills one or a few of 16 cells there,
   where 16 x 16 counts were noise and the picks followed the noise stream (round 4).
4. From `LOW_SIGNAL` up: 16 x 16 noisy counts (one compact cluster or not) and a noisy number of
   occupied cells: N over it tells point masses (a few hundred places carrying all the points)
   from spread data, which 16 x 16 cannot (round 4's worst cell: airline route ends, AG 2.25x
   behind PrivTree).

The whole release — features, choice and histogram — is eps_tot-DP (adaptive sequential
composition: eps_selection + eps_build = eps_tot, with eps_selection a function of the released
noisy N only); the choice is post-processing of the noisy measurements, so it costs nothing
beyond them.
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
from core.spatial.release import Release
from core.spatial.selection_features import (
    CELLS_SHARE,
    COARSE_SHARE,
    LOW_SIGNAL,
    N_SELECTION_SHARE,
    SELECTION_SHARE,
    SHAPE_SHARE,
    VERY_LOW_SIGNAL,
    Features,
    Measured,
    coarse_counts,
    dispersion,
    measure_features,
    shape_shares,
)
from core.spatial.unit import POINT, Unit

__all__ = [  # the features' names are re-exported: callers import the choice from here
    "CELLS_SHARE", "COARSE_SHARE", "LOW_SIGNAL", "N_SELECTION_SHARE", "SELECTION_SHARE",
    "SHAPE_SHARE", "VERY_LOW_SIGNAL", "Features", "Measured", "coarse_counts",
    "dispersion", "measure_features", "shape_shares",
    # the rules and their thresholds
    "RULES", "CANDIDATES", "CLUSTERED_QUARTER", "COMPACT_TOP_SHARE",
    "COMPACT_DISPERSION", "POINT_MASSES", "Rule", "Selection", "build_auto", "choose", "reasons",
]  # fmt: skip


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
# airports, African cities, two GPS tracks). Round 2 refitted on design + held-out set 1 and ran
# once on held-out set 2: a tree method only where the coarse grid shows ONE compact cluster
# (PrivTree at very high signal, DAWA otherwise); DAWA at very high signal (its buckets follow
# several dense centres); AG everywhere else. Rounds 3 and 4 changed the shares; round 5 was
# fitted on design + held-out sets 1-3 with 20 repetitions and run once on held-out set 4; round
# 6 (these rules) was fitted on design + held-out sets 1-4 and run once on held-out set 5
# (bench/htf_heldout5.py).
#
# Below VERY_LOW_SIGNAL (330; selection_features): UG, nothing else measured. On the 8 fitted
# cells there (GPS track at 88, Sacramento homes at 84, the Fiji quakes at 90, John Snow's
# cholera deaths at 52, Ames houses at 264, US airports at 276, county centroids at 280, South
# American cities at 328) UG was best or within 1.05x in seven and 1.21x behind the best in one
# (the Fiji quakes at 90, where AG was 1.48x behind). Round 5 read the 4 x 4 shape there and sent
# these sets to DAWA in up to 65 % of the repetitions, where DAWA was 1.09-1.53x behind on the
# spread ones (its regrets 1.01-1.15 where UG alone gives 1.00-1.05). Above it UG loses: the
# cycling track at 395 and African cities at 435 (UG 1.30-1.47x behind AG); 330 is the geometric
# middle of 280 and 393 (round 5).
#
# From VERY_LOW_SIGNAL to LOW_SIGNAL (4 x 4 counts). On those cells of the 20-repetition runs,
# relative to the best at full eps: a compact cluster makes UG 8-10x and AG 2.4-4.1x behind DAWA
# (DAWA <= 1.13x on every clustered cell), while on spread real data DAWA was 1.09-1.53x behind.
# The densest quarter of the 4 x 4 noisy counts (5 % of eps) holds >= 0.78 of the mass in 95 % of
# draws for every clustered set (Gaussians, the city mixture at 1e4, the compact Gaussian of
# held-out set 3) and at most 0.78 in 95 % of draws for every spread set with signal >= 300
# (median 0.56-0.66): CLUSTERED_QUARTER = 0.75 sends a spread set to DAWA in a few per cent of
# draws and a cluster to AG in about 2 % (round 5). Round 6 checked it on held-out set 4's real
# sets that look gathered at 4 x 4 (the Fiji quakes, Sacramento homes and Snow's deaths at eps 1,
# where AG is best and DAWA 1.14-1.32x behind): over the 13 fitted cells of this band, simulated
# from the methods runs, the expected regret of the choice is at most 1.18 at 0.75, 1.17 at 0.80
# and 1.14 with the quarter taken over the noisy N at 0.85, differences within the runs' noise,
# so the threshold stayed.
CLUSTERED_QUARTER = 0.75
# From LOW_SIGNAL up (16 x 16 counts), round 2's shape thresholds: one compact cluster when the
# densest 1/16 of the coarse cells hold >= 60 % of the noisy mass and the clearly non-empty cells
# lie within 0.17 of the side of their centre of mass.
COMPACT_TOP_SHARE = 0.6
COMPACT_DISPERSION = 0.17
# Points per occupied cell of the release's grid (conservative, selection_features.
# points_per_cell). On the seen sets the non-compact ones have 1.0-6.1 points per occupied cell
# (cities, airports, ZIP and county centroids, tracks, check-ins, taxi ends, the city mixture
# at 1e6) and there AG was best or within 1.17x; airline route ends have 55 (their 17,733 points
# sit on 321 cells) and there PrivTree was best, AG 2.07x behind at eps 1. 15 is about the
# geometric middle of 6.1 and the 35-40 the route ends read as at eps 1 (docs/benchmarks/htf.md,
# round 5). PrivTree rather than DAWA: on the route ends PrivTree was best at both epsilons
# (DAWA 1.13-1.14x), and PrivTree's worst ratio over every seen cell is 1.63x (DAWA's 1.88x).
POINT_MASSES = 15.0


def _compact(f: Features) -> bool:
    return (f.top_share or 0.0) >= COMPACT_TOP_SHARE and (
        f.dispersion is not None and f.dispersion < COMPACT_DISPERSION
    )


RULES: tuple[Rule, ...] = (
    Rule(
        "very-low-signal",
        "ug",
        "noisy N x epsilon < 330: too few points per unit of noise for any adaptive structure, "
        "so the plain uniform grid is as good as any and cannot go badly wrong; nothing is "
        "spent on the shape, so this is UG alone",
        lambda f: f.signal < VERY_LOW_SIGNAL,
    ),
    Rule(
        "few-points-clustered",
        "dawa",
        "noisy N x epsilon < 1,200 and the densest quarter of the 4 x 4 noisy counts hold >= 75 % "
        "of the noisy mass: few points per unit of noise, gathered in one part of the region; "
        "DAWA, which merges the empty parts and splits only where the counts vary, was within "
        "1.13x of the best there, where a grid was 2.4-10x behind",
        lambda f: f.signal < LOW_SIGNAL and (f.top_quarter or 0.0) >= CLUSTERED_QUARTER,
    ),
    Rule(
        "low-signal-spread",
        "ag",
        "noisy N x epsilon from 330 to 1,200 and the points are not gathered in one part: AG's "
        "two-level grid was best on real data there",
        lambda f: f.signal < LOW_SIGNAL,
    ),
    Rule(
        "one-compact-cluster-very-high-signal",
        "privtree",
        "the densest 1/16 of the coarse cells hold >= 60 % of the noisy mass, close together "
        "(dispersion < 0.17 of the side), and noisy N x epsilon >= 300,000: PrivTree's "
        "quadtree resolves one dense cluster deepest",
        lambda f: _compact(f) and f.signal >= 300_000,
    ),
    Rule(
        "one-compact-cluster",
        "dawa",
        "the densest 1/16 of the coarse cells hold >= 60 % of the noisy mass, close together "
        "(dispersion < 0.17 of the side): one compact cluster, which DAWA's data-dependent "
        "buckets follow closely",
        _compact,
    ),
    Rule(
        "point-masses",
        "privtree",
        "the points sit on few places: noisy N over the noisy number of occupied cells (raised "
        "by 3 noise scales) is >= 15 points per occupied cell. A grid spreads its noise over "
        "the empty cells between those places; PrivTree splits only where the points are",
        lambda f: f.points_per_cell is not None and f.points_per_cell >= POINT_MASSES,
    ),
    Rule(
        "very-high-signal",
        "dawa",
        "noisy N x epsilon >= 250,000 with several dense centres: DAWA's buckets follow them "
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
SIZED_BY_N = ("ug", "ag")  # candidates that size their grid from N: they reuse stage 1's N
# UG's constant (build_ug's default c = 10). UG alone sizes its grid with the whole eps_tot
# (m = sqrt(N x eps_tot / c)) while its cells get eps_tot - eps_n; handed eps_build, it gets
# c x eps_build / eps_tot, so the grid is the one UG alone draws. With stage 1's share equal to
# N_SHARE, Recommended's UG is then UG with its cells at (1 - SHAPE_SHARE) x eps_tot (cell
# error about 1 / 0.95 = 1.05x UG alone's; bench/htf_auto_vs_ug.py).
UG_C = 10.0


def _shown(method: str) -> str:
    return method.upper() if method in ("ug", "ag") else method


def reasons(
    features: Features, rule: Rule, eps_sel: float, eps_build: float, k: int, public: bool
) -> tuple:
    """The choice in plain sentences (shown by pages and reports; all public: noisy features)."""
    unit = "points" if k == 1 else f"points (each person counted with at most {k})"
    if public:
        first = (
            f"Recommended used the declared public number of {unit} "
            f"({features.noisy_n:,.0f}), spending nothing on it, and measured"
        )
    else:
        first = (
            f"Recommended measured the number of {unit} with noise (about "
            f"{max(features.noisy_n, 0):,.0f}) and"
        )
    if features.top_quarter is None:  # below VERY_LOW_SIGNAL: nothing but N
        text = (
            f"{first} nothing else (epsilon {eps_sel:.3g} in all for choosing): about "
            f"{features.signal:,.0f} points per unit of noise, too few for any adaptive "
            "structure, so the shape was not measured and the histogram got the rest.",
        )
    elif features.points_per_cell is None:  # the low band: 4 x 4 counts only
        text = (
            f"{first} a 4 x 4 grid of noisy counts (epsilon {eps_sel:.3g} in all for choosing); "
            f"that leaves about {features.signal:,.0f} points per unit of noise for the "
            "histogram, too few for a finer look at the shape.",
            f"The densest quarter of the coarse cells hold {features.top_quarter:.0%} of the "
            "noisy mass.",
        )
    else:
        text = (
            f"{first} a 16 x 16 grid of noisy counts and the number of occupied cells with "
            f"noise (epsilon {eps_sel:.3g} in all for choosing); that leaves about "
            f"{features.signal:,.0f} points per unit of noise for the histogram.",
            f"The densest 1/16 of the coarse cells hold {features.top_share:.0%} of the noisy "
            f"mass (dispersion {features.dispersion:.2f} of the grid side); about "
            f"{max(features.noisy_cells or 0.0, 0):,.0f} cells are occupied, at least "
            f"{features.points_per_cell:,.1f} points per occupied cell.",
        )
    how = "declared" if public else "noisy"
    reused = (
        f" sized by that same {how} number of {unit}, so its grid cost nothing more,"
        if rule.method in SIZED_BY_N
        else ""
    )
    return (
        *text,
        f"It built {_shown(rule.method)} with the rest, epsilon {eps_build:.3g},{reused} by the "
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
    public_n: bool = False  # N was a declared public size (nothing spent on it)

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
            "public_n": self.public_n,
        }


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
    public_n: float | None = None,
    n_share: float = N_SELECTION_SHARE,
    coarse_share: float = COARSE_SHARE,
    cells_share: float = CELLS_SHARE,
) -> Release:
    """Recommended (private choice): two noisy measurements, a rule, the chosen method.

    Privacy: eps_tot-DP for the unit (a point, or a person with at most K points; add/remove).
    `measure_features` spends eps_sel (n_share x eps_tot on a noisy N, nothing with a declared
    `public_n`; then the shape's shares, a function of that noisy N only: `shape_shares`); the
    chosen method is built with eps_build = eps_tot - eps_sel and states its own mechanisms; UG
    and AG are sized by the stage-1 noisy N (post-processing, handed on as their size) instead
    of buying their own. Adaptive sequential composition: eps_sel + eps_build = eps_tot always.
    The returned Release's `epsilon` has a "selection" part next to the chosen method's parts
    (they add up to "total") and `info["selection"]` holds the typed `Selection`.
    """
    if not (eps_tot > 0 and math.isfinite(eps_tot)):
        raise InputError(f"epsilon must be a positive number, got {eps_tot}.")
    shares = {"n_share": n_share, "coarse_share": coarse_share, "cells_share": cells_share}
    for name, share in shares.items():
        if not 0 < share < 1:
            raise InputError(f"the selection's {name} must be in (0, 1), got {share}.")
    if sum(shares.values()) >= 1:
        raise InputError("the selection's shares must add up to less than 1.")
    if public_n is not None and (
        isinstance(public_n, bool) or not (math.isfinite(public_n) and public_n >= 0)
    ):
        raise InputError(
            f"public_n (a declared public number of points) must be >= 0, got {public_n!r}."
        )
    F = np.asarray(F)
    if F.ndim != 2 or not np.issubdtype(F.dtype, np.integer):
        raise ValueError("F must be a 2-D integer frequency matrix")
    accountant.require(Cost(float(eps_tot)), "auto (features + the chosen method)")
    measured = measure_features(
        F,
        eps_tot,
        accountant,
        unit,
        public_n=public_n,
        n_share=n_share,
        coarse_share=coarse_share,
        cells_share=cells_share,
    )
    feats, eps_sel = measured.features, measured.epsilon
    eps_build = eps_tot - eps_sel
    rule = choose(feats)
    size = {"public_n": max(feats.noisy_n, 0.0)} if rule.method in SIZED_BY_N else {}
    if rule.method == "ug":  # the grid UG alone would draw at eps_tot: m = sqrt(N eps_tot / c)
        size["c"] = UG_C * eps_build / eps_tot
    rel = BASELINES[rule.method](F, eps_build, accountant, unit=unit, **size)
    selection = Selection(
        method=rule.method,
        rule=rule.name,
        condition=rule.condition,
        epsilon=eps_sel,
        epsilon_build=eps_build,
        coarse_grid=tuple(measured.coarse.shape),
        noise_scales=measured.noise_scales,
        features=feats,
        reasons=reasons(feats, rule, eps_sel, eps_build, unit.max_points, public_n is not None),
        public_n=public_n is not None,
    )
    parts = {k: v for k, v in rel.epsilon.items() if k != "total" and v > 0}
    rel.epsilon = {"total": float(eps_tot), "selection": eps_sel, **parts}
    chosen_label = rel.info.get("label") or BASELINE_LABELS.get(rel.method, rel.method)
    rel.mechanisms = accountant.mechanisms  # the features' mechanisms and the chosen method's
    info = dict(rel.info)
    if (
        size and public_n is None
    ):  # the chosen grid was sized by the selection's N, not by a declared size
        info.pop("n_public", None)
        info["n_from_selection"] = size["public_n"]
    rel.info = {
        **info,
        "selection": selection,
        "selection_reasons": list(selection.reasons),
        "reasons": list(selection.reasons),  # what core/spatial/record.py's MethodChoice reads
        "requested_method": "auto",
        "label": f"Recommended (private choice): {chosen_label}",
    }
    # in params too, so every export's metadata carries the choice, its features and its rule
    params = {k: v for k, v in rel.params.items() if k != "public_n"}
    rel.params = {
        **params,
        "eps_tot": float(eps_tot),
        "public_n": public_n,
        "selection_shares": {
            "n": n_share,
            "coarse_counts": coarse_share,
            "occupied_cells": cells_share,
        },
        "selection": selection.to_dict(),
    }
    return rel
