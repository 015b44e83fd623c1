"""Private choice of the location-histogram method ("Recommended (private choice)", method `auto`).

Beyond the paper; in the spirit of Pythia (Kotsogiannis et al., SIGMOD 2017), reduced to what
was measured to pay (issue 31, round 7; docs/benchmarks/recommended.md). A user who always
picked one fixed method would have done best on average with PrivTree: across the benchmark's
collections it had the lowest geometric-mean regret of every in-house method (UG, AG, PrivTree,
DAWA, HB, kd-hybrid), while AG, best on spread real places, was 2-13x behind on compact
clusters and heavy places. Issue 20's rounds 1-6 spent 10 % of epsilon on the shape and picked
UG, AG, PrivTree or DAWA by hand thresholds; on data no rule had seen they sent heavy places and
lines to AG (1.4-2.2x behind PrivTree), and an independent evaluation found PrivTree alone
better than Recommended by geometric-mean regret on every collection. So round 7:

1. A noisy N (Laplace, sensitivity K, 1 % of epsilon; nothing with a declared public size):
   core/spatial/selection_features.py.
2. Below `VERY_LOW_SIGNAL` points per unit of noise: UG with the rest, sized by that same N.
   There no adaptive structure pays for itself and PrivTree was up to 1.45x behind UG.
3. Otherwise PrivTree with the rest: the method best on average, where the features could not
   tell (no shape feature measured on the benchmark told heavy places and lines from spread
   places reliably enough to pay for its share; docs/benchmarks/recommended.md).

The whole release — the noisy N, the choice and the histogram — is eps_tot-DP (sequential
composition: eps_selection + eps_build = eps_tot, with eps_selection fixed before any draw);
the choice is post-processing of the noisy N, so it costs nothing beyond it.
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
    N_SELECTION_SHARE,
    SELECTION_SHARE,
    VERY_LOW_SIGNAL,
    Features,
    Measured,
    measure_features,
)
from core.spatial.unit import POINT, Unit

__all__ = [  # the features' names are re-exported: callers import the choice from here
    "N_SELECTION_SHARE", "SELECTION_SHARE", "VERY_LOW_SIGNAL", "Features", "Measured",
    "measure_features", "DEFAULT_METHOD", "RULES", "CANDIDATES", "Rule", "Selection",
    "build_auto", "choose", "reasons",
]  # fmt: skip


@dataclass(frozen=True)
class Rule:
    """One selection rule: when `applies(features)` holds, build `method`."""

    name: str
    method: str
    condition: str  # the condition in words (shown and exported)
    applies: Callable[[Features], bool]


# The method built where the features cannot tell: the lowest geometric-mean regret of every
# in-house method across the benchmark's collections (bench/recommended_regret.py).
DEFAULT_METHOD = "privtree"

# Ordered: the first rule that applies fires.
RULES: tuple[Rule, ...] = (
    Rule(
        "very-low-signal",
        "ug",
        "noisy N x epsilon < 330: too few points per unit of noise for any adaptive "
        "structure, so the plain uniform grid, sized by that same noisy N, is as good as any "
        "(PrivTree was up to 1.45x behind it there)",
        lambda f: f.signal < VERY_LOW_SIGNAL,
    ),
    Rule(
        "best-on-average",
        DEFAULT_METHOD,
        "otherwise: PrivTree, the method with the lowest error on average across the "
        "benchmark's collections of point sets; a fixed method did better on some sets "
        "(AG on spread places such as city lists), but no feature we measured told those sets "
        "apart reliably enough to pay for the epsilon it costs",
        lambda f: True,
    ),
)
CANDIDATES = tuple(dict.fromkeys(r.method for r in RULES))
SIZED_BY_N = ("ug",)  # candidates that size their grid from N: they reuse the selection's N
# UG's constant (build_ug's default c = 10). UG alone sizes its grid with the whole eps_tot
# (m = sqrt(N x eps_tot / c)); handed eps_build, it gets c x eps_build / eps_tot, so the grid is
# the one UG alone draws, and its cells get 99 % of epsilon (UG alone's get 95 %).
UG_C = 10.0


def _shown(method: str) -> str:
    return (
        method.upper() if method in ("ug", "ag") else {"privtree": "PrivTree"}.get(method, method)
    )


def reasons(
    features: Features, rule: Rule, eps_sel: float, eps_build: float, k: int, public: bool
) -> tuple:
    """The choice in plain sentences (shown by pages and reports; all public: noisy features)."""
    unit = "points" if k == 1 else f"points (each person counted with at most {k})"
    if public:
        first = (
            f"Recommended used the declared public number of {unit} "
            f"({features.noisy_n:,.0f}), spending nothing on it"
        )
    else:
        first = (
            f"Recommended measured the number of {unit} with noise (about "
            f"{max(features.noisy_n, 0):,.0f}; epsilon {eps_sel:.3g})"
        )
    reused = (
        " sized by that same number, so its grid cost nothing more,"
        if rule.method in SIZED_BY_N
        else ""
    )
    return (
        f"{first}: about {features.signal:,.0f} points per unit of noise for the histogram.",
        f"It built {_shown(rule.method)} with the rest, epsilon {eps_build:.3g},{reused} by the "
        f"rule '{rule.name}': {rule.condition}.",
        f"The candidates were {', '.join(CANDIDATES)}; how often each fixed method would have "
        "done better is measured in docs/benchmarks/recommended.md.",
    )


@dataclass(frozen=True)
class Selection:
    """What `auto` chose and why: all of it is public (noisy features + public parameters)."""

    method: str
    rule: str
    condition: str
    epsilon: float  # spent on the features (part of the release's total)
    epsilon_build: float  # left for the chosen method
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
) -> Release:
    """Recommended (private choice): a noisy N, a rule, the chosen method.

    Privacy: eps_tot-DP for the unit (a point, or a person with at most K points; add/remove).
    `measure_features` spends eps_sel = n_share x eps_tot on a noisy N (a `Laplace` mechanism
    on `accountant`, sensitivity K; nothing with a declared `public_n`); the chosen method is
    built with eps_build = eps_tot - eps_sel on the same accountant and states its own
    mechanisms; UG is sized by the noisy N (post-processing, handed on as its size) instead of
    buying its own. Sequential composition: eps_sel + eps_build = eps_tot always, and
    `Release.mechanisms` lists every mechanism that drew, the selection's first. The returned
    Release's `epsilon` has a "selection" part next to the chosen method's parts (they add up
    to "total") and `info["selection"]` holds the typed `Selection`.
    """
    if not (eps_tot > 0 and math.isfinite(eps_tot)):
        raise InputError(f"epsilon must be a positive number, got {eps_tot}.")
    if not 0 < n_share < 1:
        raise InputError(f"the selection's n_share must be in (0, 1), got {n_share}.")
    if public_n is not None and (
        isinstance(public_n, bool) or not (math.isfinite(public_n) and public_n >= 0)
    ):
        raise InputError(
            f"public_n (a declared public number of points) must be >= 0, got {public_n!r}."
        )
    F = np.asarray(F)
    if F.ndim != 2 or not np.issubdtype(F.dtype, np.integer):
        raise ValueError("F must be a 2-D integer frequency matrix")
    accountant.require(Cost(float(eps_tot)), "auto (noisy N + the chosen method)")
    measured = measure_features(F, eps_tot, accountant, unit, public_n=public_n, n_share=n_share)
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
        "selection_shares": {"n": n_share},
        "selection": selection.to_dict(),
    }
    return rel
