"""Baselines for DP location histograms (spec htf.md §3), one module per method.

Every builder has the signature
``build_<name>(F, eps_tot, accountant, *, unit=POINT, **params) -> Release`` with the spec's
parameters as keyword arguments and spec defaults.

`BASELINES` maps a builder's `Release.method` to the builder and `LABELS` to the label it
states for itself: the in-house builders, which `core.spatial.selection` (Recommended) builds
by name. They are not a list of what is offered: which methods the CLI, the page, `dpx compare`
and the planners offer, under which label and with which capabilities, is one table,
`core.spatial.methods.CATALOG`, whose baseline rows take their builder and label from here.
(The table cannot live here: its `auto` row is built by `selection`, which imports this.)
"""

from collections.abc import Callable

from core.spatial.baselines.ag import build_ag
from core.spatial.baselines.dawa import build_dawa
from core.spatial.baselines.hb import build_hb
from core.spatial.baselines.identity import build_identity
from core.spatial.baselines.kdtree import build_kdtree, build_kdtree_geo, build_kdtree_uniform
from core.spatial.baselines.privelet import build_privelet
from core.spatial.baselines.privtree import build_privtree
from core.spatial.baselines.quadtree import build_quadtree
from core.spatial.baselines.ug import build_ug
from core.spatial.baselines.uniform import build_uniform

BASELINES: dict[str, Callable] = {
    "identity": build_identity,
    "uniform": build_uniform,
    "ug": build_ug,
    "ag": build_ag,
    "kdtree-geo": build_kdtree_geo,
    "kdtree-uniform": build_kdtree_uniform,
    "quadtree": build_quadtree,
    "privtree": build_privtree,
    "privelet": build_privelet,
    # the strongest published peers, in-house (issue 20): labelled baselines
    "dawa": build_dawa,
    "hb": build_hb,
}

LABELS: dict[str, str] = {
    "identity": "Identity",
    "uniform": "Uniform",
    "ug": "UG",
    "ag": "AG",
    "kdtree-geo": "KdTree (geo)",
    "kdtree-uniform": "KdTree (uniform)",
    "quadtree": "QuadTree",
    "privtree": "PrivTree",
    "dawa": "DAWA (baseline, Hilbert order)",
    "hb": "HB (baseline)",
    "privelet": "Privelet (unweighted)",
}

__all__ = [
    "BASELINES",
    "LABELS",
    "build_ag",
    "build_dawa",
    "build_hb",
    "build_identity",
    "build_kdtree",
    "build_kdtree_geo",
    "build_kdtree_uniform",
    "build_privelet",
    "build_privtree",
    "build_quadtree",
    "build_ug",
    "build_uniform",
]
