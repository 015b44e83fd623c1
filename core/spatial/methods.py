"""The location methods: ONE table (`CATALOG`), one row per method, and everything that varies
between methods read from it (issue 28: things that vary carry their own capabilities).

A row (`Method`) says what the method is called where people type it (`name`: `dpx release
--method NAME`, `dpx compare --methods`, `plan budget --item location:...:method=NAME`), what
the page shows (`label`), what it does in a line, which doors offer it (`doors`; a door that
does not must say why in `why_not`), whether `dpx compare` runs it by default, what it takes
(the numeric parameters the doors may set), how its export states each leaf's noise (every
method exports as GeoJSON and CSV alike), and the builder with the common interface

    build(F, eps_tot, accountant, *, unit=POINT, **params) -> Release

`accountant` (`core.privacy.Accountant`) holds the noise source and the charge; every noisy
statistic is drawn by a mechanism object on it, so `Release.mechanisms` is exactly what drew.
`unit` is `PointUnit()` or `PersonUnit(column, k)` (core/spatial/unit.py): every method takes
both, so `--uid COL --max-points-per-person K` (the page's person column) needs no column here
(tests/spatial/test_persons.py holds every row to its sensitivity under the person unit).

Privacy claim shared by every row: a release built by `build(F, eps, accountant, unit=u)` is
eps-DP for the unit `u` (one point, or a person with at most K points, the counts in `F`
bounded so when they were binned); its builder draws only through `accountant`, whose budget
is the eps charged.

The CLI's `--method` choices, `dpx compare`'s default set and method list, the export's leaf
noise, the planners' method names and the location page's method selector are all this
table (`location_method_names(door)`); tests hold each door to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import partial
from types import MappingProxyType

from core.errors import InputError
from core.spatial.baselines import BASELINES
from core.spatial.baselines import LABELS as BASELINE_LABELS
from core.spatial.baselines.kdtree import build_kdtree
from core.spatial.baselines.quadtree import build_quadtree
from core.spatial.htf import build_htf
from core.spatial.release import Release
from core.spatial.selection import build_auto

Builder = Callable[..., Release]


class Door(Enum):
    """Where a method is offered."""

    RELEASE = "release"  # `dpx release --method NAME` and the location page's Methods selector
    COMPARE = "compare"  # `dpx compare --methods` (evaluation on raw data; owner only)
    PLAN = "plan"  # the planners: `dpx plan location`, `plan budget --item location:...`, the page


ALL_DOORS = frozenset(Door)


class LeafNoise(Enum):
    """How an export states the noise in each leaf's value (`core.spatial.export`)."""

    STATED = "stated"  # the builder states each leaf's std (release.info["leaf_noise_std"]);
    # HTF does so unless consistency is on (then its leaves are combinations)
    ONE_SCALE = "one scale"  # one Laplace count scale b for every leaf: std = sqrt(2) b
    COMBINED = "combined"  # leaves are post-processed combinations: no per-leaf std is stated
    OF_CHOICE = "of the choice"  # a selector's release is the chosen method's (and named so)


class Family(Enum):
    """What kind of method a row is (the `METHODS` and `VARIANTS` views below split by it)."""

    PAPER = "paper"  # HTF and the baselines of its evaluation, faithful to their papers
    PEER = "peer"  # the strongest published peers, in-house, labelled baselines (issue 20)
    VARIANT = "variant"  # switchable improvements, evaluated as separate rows (spec §2.10)
    SELECTOR = "selector"  # picks another method privately (core/spatial/selection.py)


# HTF's numeric parameters and §2.10 flags (the page's sidebar; `dpx htf`'s options). A variant
# takes the numbers but neither the flags nor eps_height: it fixes its own (see CATALOG).
HTF_NUMBERS = ("eps_height", "eps_prt_level", "T", "stop_count", "stop_cells", "height")
HTF_FLAGS = ("combine_pruned", "consistency", "cap_height")


@dataclass(frozen=True)
class Method:
    """One location method and its capabilities (a row of `CATALOG`)."""

    name: str  # CLI spelling, also `Release.method` and the page's option value
    label: str  # shown on the page, in legends and reports
    description: str  # one line: what it does
    build: Builder
    family: Family
    doors: frozenset[Door] = ALL_DOORS
    why_not: str = ""  # why a door does not offer it (required when `doors` is not all)
    compare_default: bool = False  # in `dpx compare`'s default --methods
    params: tuple[str, ...] = ()  # keyword parameters the doors may set (HTF's sidebar/options)
    leaf_noise: LeafNoise = LeafNoise.COMBINED

    def __post_init__(self) -> None:
        if self.doors != ALL_DOORS and not self.why_not:
            raise ValueError(f"method {self.name!r} is not offered everywhere: say why")

    def offered(self, door: Door) -> bool:
        return door in self.doors


def _baseline(
    name: str, family: Family, description: str, label: str | None = None, **kw
) -> Method:
    """A row for an in-house baseline builder: its builder and, unless `label`, the label it
    states for itself (`core.spatial.baselines`, which `auto` shows when it chooses it); its
    releases carry that label."""
    label = label or BASELINE_LABELS[name]
    return Method(
        name, label, description, partial(_named, BASELINES[name], name, label), family, **kw
    )


def _variant(name: str, label: str, description: str, build: Builder, **kw) -> Method:
    """A row for a labelled variant: its release carries the variant's own name and label (the
    builder it modifies would name it after itself, e.g. "quadtree" or "htf+")."""
    return Method(
        name, label, description, partial(_named, build, name, label), Family.VARIANT, **kw
    )


def _named(build: Builder, name: str, label: str, *args, **kwargs) -> Release:
    """`build(*args, **kwargs)`, the release named `name` and labelled `label`: one name and one
    label per method on the page, in the CLI's output, the export and the registry record (a
    builder that labels itself, e.g. DAWA with its citation, keeps that label in
    `info["builder_label"]`). Naming draws nothing."""
    rel = build(*args, **kwargs)
    rel.method = name
    own = rel.info.get("label")
    kept = {"builder_label": own} if own not in (None, label) else {}
    rel.info = {**rel.info, "label": label, **kept}
    return rel


def _paper(name: str, description: str, leaf_noise=LeafNoise.COMBINED, **kw) -> Method:
    """A baseline of HTF's evaluation: `dpx compare` runs it by default."""
    return _baseline(
        name, Family.PAPER, description, compare_default=True, leaf_noise=leaf_noise, **kw
    )


_HTF_VARIANT_PARAMS = tuple(p for p in HTF_NUMBERS if p != "eps_height")
# the variants size the height from a noisy N bought with a share of epsilon (eps_height=None),
# not the paper's fixed 1e-4 (see core/spatial/common.py, N_SHARE)
_HTF = partial(build_htf, eps_height=None)

CATALOG: tuple[Method, ...] = (
    Method(
        "auto", "Recommended (private choice)",
        "1 % of epsilon buys a noisy N; UG below 330 points per unit of noise, else PrivTree",
        build_auto, Family.SELECTOR, leaf_noise=LeafNoise.OF_CHOICE,
    ),
    Method(
        "htf", "HTF", "hierarchical tree: noisy split search per level, counts at every level",
        build_htf, Family.PAPER, compare_default=True, params=(*HTF_NUMBERS, *HTF_FLAGS),
        leaf_noise=LeafNoise.STATED,
    ),
    _paper("kdtree-geo", "kd-tree at noisy medians, geometric count budget per level"),
    _paper("kdtree-uniform", "kd-tree at noisy medians, equal count budget per level"),
    _paper("ug", "uniform grid sized from a noisy N", LeafNoise.ONE_SCALE),
    _paper("ag", "adaptive grid: a coarse grid, dense cells split again"),
    _paper("quadtree", "data-independent quadtree, all levels measured, consistency"),
    _paper("privtree", "quadtree split where a biased noisy count is large", LeafNoise.ONE_SCALE),
    _paper("identity", "every grid cell with its own noisy count", LeafNoise.ONE_SCALE,
           label="Identity (singular)"),
    _paper("uniform", "one noisy total spread evenly over the box", LeafNoise.ONE_SCALE),
    _baseline("privelet", Family.PAPER, "noisy Haar wavelet coefficients (unweighted)"),
    _baseline("dawa", Family.PEER, "DAWA: data-aware buckets along a Hilbert order"),
    _baseline("hb", Family.PEER, "HB: a hierarchy whose branching suits the domain size"),
    _variant(
        "htf+", "HTF (modified: combine_pruned, consistency)",
        "HTF with inverse-variance at pruned nodes and GLS consistency over the tree",
        partial(_HTF, combine_pruned=True, consistency=True), params=_HTF_VARIANT_PARAMS,
    ),
    _variant(
        "htf-combine", "HTF (modified: combine_pruned)",
        "HTF with inverse-variance combination at pruned nodes",
        partial(_HTF, combine_pruned=True), params=_HTF_VARIANT_PARAMS,
        leaf_noise=LeafNoise.STATED,
    ),
    _variant(
        "htf-consistency", "HTF (modified: consistency)", "HTF with GLS consistency over the tree",
        partial(_HTF, consistency=True), params=_HTF_VARIANT_PARAMS,
    ),
    _variant(
        "htf-cap", "HTF (modified: cap_height)",
        "HTF whose partition budget is at most half of epsilon", partial(_HTF, cap_height=True),
        params=_HTF_VARIANT_PARAMS, leaf_noise=LeafNoise.STATED,
    ),
    _variant(
        "quadtree-leaves", "QuadTree (improved height: leaves ~ N eps / 400)",
        "quadtree whose height follows the noisy N (the baseline's own rule stays faithful)",
        partial(build_quadtree, height_rule="leaf-count"),
    ),
    _variant(
        # Cormode et al.'s kd-hybrid with their pruning rule (docs/benchmarks/htf.md, "kd-tree"):
        # the faithful kd-trees above split empty space at random and never stop early
        "kdtree-hybrid",
        "KdTree (hybrid + pruning: medians in the top 3 levels, stop at noisy count <= 32)",
        "kd-tree with noisy medians in the top 3 levels, middles below, pruned at count <= 32",
        partial(build_kdtree, switch_level=3, early_stop=32.0, method="kdtree-hybrid"),
    ),
)  # fmt: skip

BY_NAME: Mapping[str, Method] = MappingProxyType({m.name: m for m in CATALOG})
if len(BY_NAME) != len(CATALOG):  # pragma: no cover - a typo in the table
    raise ValueError("two location methods share a name")

# Read-only views of the table for the code that reads names and labels.
LABELS: Mapping[str, str] = MappingProxyType({m.name: m.label for m in CATALOG})
DEFAULT_COMPARE: tuple[str, ...] = tuple(m.name for m in CATALOG if m.compare_default)
METHODS: Mapping[str, Builder] = MappingProxyType(
    {m.name: m.build for m in CATALOG if m.family in (Family.PAPER, Family.PEER)}
)
VARIANTS: Mapping[str, Builder] = MappingProxyType(
    {m.name: m.build for m in CATALOG if m.family in (Family.VARIANT, Family.SELECTOR)}
)


def location_method_names(door: Door = Door.RELEASE) -> tuple[str, ...]:
    """The names a door offers, in the table's order (`auto`, the recommended one, first).

    The one list for `dpx release --method`, the page's Methods selector (`Door.RELEASE`),
    `dpx compare --methods` (`Door.COMPARE`) and the planners (`Door.PLAN`)."""
    return tuple(m.name for m in CATALOG if m.offered(door))


def method(name: str, door: Door | None = None) -> Method:
    """The row called `name` (case and spaces ignored); with `door`, only if it offers it."""
    key = str(name).strip().lower()
    row = BY_NAME.get(key)
    if row is None or (door is not None and not row.offered(door)):
        known = ", ".join(location_method_names(door) if door else BY_NAME)
        why = f" ({row.why_not})" if row is not None else ""
        raise InputError(f"unknown method '{name}'{why}. Choose from: {known}.")
    return row


def get_method(name: str) -> Builder:
    """The builder of the method called `name` (InputError naming the choices otherwise)."""
    return method(name).build


def parse_methods(text: str | Sequence[str], door: Door = Door.COMPARE) -> list[str]:
    """Comma-separated method names, validated against `door` and de-duplicated in order."""
    names = [s.strip().lower() for s in (text.split(",") if isinstance(text, str) else text)]
    names = [n for n in dict.fromkeys(names) if n]
    if not names:
        raise InputError("no methods given; pass e.g. --methods htf,ug,ag.")
    for n in names:
        method(n, door)
    return names
