"""Registry of the spatial methods: name -> build function with the common interface

build_<name>(F, eps_tot, accountant, *, unit=POINT, **params) -> Release

`accountant` (`core.privacy.Accountant`) holds the noise source and the charge; every noisy
statistic is drawn by a mechanism object on it, so `Release.mechanisms` is exactly what drew.
`unit` is `PointUnit()` or `PersonUnit(column, k)` (core/spatial/unit.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from core.errors import InputError
from core.spatial.baselines import BASELINES
from core.spatial.baselines import LABELS as BASELINE_LABELS
from core.spatial.baselines.kdtree import build_kdtree
from core.spatial.baselines.quadtree import build_quadtree
from core.spatial.htf import build_htf
from core.spatial.selection import build_auto

LABELS = {
    "htf": "HTF",
    "htf+": "HTF (modified: combine_pruned, consistency)",
    "htf-combine": "HTF (modified: combine_pruned)",
    "htf-consistency": "HTF (modified: consistency)",
    "htf-cap": "HTF (modified: cap_height)",
    "quadtree-leaves": "QuadTree (improved height: leaves ~ N eps / 400)",
    "kdtree-hybrid": "KdTree (hybrid + pruning: medians in the top 3 levels, stop at noisy count <= 32)",
    "auto": "Recommended (private choice)",
    **BASELINE_LABELS,
    "identity": "Identity (singular)",
}

DEFAULT_COMPARE = (
    "htf", "kdtree-geo", "kdtree-uniform", "ug", "ag", "quadtree", "privtree", "identity", "uniform",
)  # fmt: skip

METHODS: dict[str, Callable] = {"htf": build_htf, **BASELINES}

# Switchable improvements evaluated as separate rows (spec §2.10); not part of the nine. They
# size the height from a noisy N bought with a share of epsilon (eps_height=None), not the
# paper's fixed 1e-4 (see core/spatial/common.py, N_SHARE).
VARIANTS: dict[str, Callable] = {
    "htf+": partial(build_htf, combine_pruned=True, consistency=True, eps_height=None),
    "htf-combine": partial(build_htf, combine_pruned=True, eps_height=None),
    "htf-consistency": partial(build_htf, consistency=True, eps_height=None),
    "htf-cap": partial(build_htf, cap_height=True, eps_height=None),
    # improved height rules: labelled variants, the baselines' own rules stay faithful
    "quadtree-leaves": partial(build_quadtree, height_rule="leaf-count"),
    # Cormode et al.'s kd-hybrid with their pruning rule (docs/benchmarks/htf.md, "kd-tree"):
    # the faithful kd-trees above split empty space at random and never stop early
    "kdtree-hybrid": partial(build_kdtree, switch_level=3, early_stop=32.0, method="kdtree-hybrid"),
    # a small share of eps buys noisy features, a rule picks the method (core/spatial/selection.py)
    "auto": build_auto,
}
HTF_VARIANTS = ("htf+", "htf-combine", "htf-consistency", "htf-cap")


def get_method(name: str) -> Callable:
    fn = METHODS.get(name) or VARIANTS.get(name)
    if fn is None:
        known = ", ".join([*METHODS, *VARIANTS])
        raise InputError(f"unknown method '{name}'. Choose from: {known}.")
    return fn


def parse_methods(text: str | list[str] | tuple[str, ...]) -> list[str]:
    """Comma-separated method names, validated and de-duplicated in order."""
    names = [s.strip().lower() for s in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in dict.fromkeys(names) if n]
    if not names:
        raise InputError("no methods given; pass e.g. --methods htf,ug,ag.")
    for n in names:
        get_method(n)
    return names


def htf_method_params(methods: list[str], htf: dict) -> dict[str, dict]:
    """User-set HTF parameters for "htf" and its variants; a variant keeps its own §2.10 flags
    and its share-of-epsilon noisy N (call keywords would otherwise override the ones its
    `partial` fixes): the eps_height setting is faithful HTF's."""
    flags = ("combine_pruned", "consistency", "cap_height", "eps_height")
    out: dict[str, dict] = {}
    for m in methods:
        if m == "htf":
            out[m] = dict(htf)
        elif m in HTF_VARIANTS:
            out[m] = {k: v for k, v in htf.items() if k not in flags}
    return out
