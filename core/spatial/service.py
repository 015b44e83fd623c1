"""Location histograms end to end — the one shape both front doors take (issue 28).

    LocationParams  --prepare(params, dataset)-->  LocationPrepared  --run(prepared, data, acc)-->
    (what a person asked for:                      (every check that needs no private data; the
     typed, frozen; built once                      privacy unit; the mechanisms or the typed
     at the edge: the page's widgets,               per-stage budgets the method will draw;
     `dpx release`'s argv)                          the cost composed from them)

The CLI (`core.cli.location_run`) and the page (`ui.location`) each turn their inputs into a
`LocationParams` once, call `prepare`, then `core.governance.location.location_request` (the
only place a location governance request is built) and `govern`, whose `compute` calls `run`
with an `Accountant` holding exactly `prepared.cost`.

What is stated before drawing (`LocationPrepared.mechanisms` / `.budgets`):

* methods whose mechanism objects do not depend on the data (identity, uniform, privelet, ug,
  ag, privtree, dawa) state the objects that will draw, and the cost is their composition (a test
  holds the objects that drew equal);
* adaptive methods, whose mechanisms follow structure built from noisy statistics (tree
  heights, chosen splits, the method `auto` picks), state typed `StageBudget`s: ε per stage,
  each stage naming the parts of `Release.epsilon` it covers (the noisy N, the splits, the
  counts for kd-trees, AG, QuadTree, PrivTree and DAWA; HTF's noisy N, then its partition and
  data together, whose split follows the noisy height; HB and `auto` one stage). The cost is
  the composition of the stages, and what the accountant records composes to it (HTF: less
  exactly the split levels the tree never reaches, which the accountant has planned but
  nobody drew) — tests/governance/test_location_request.py holds every method to it.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from core.errors import InputError
from core.privacy import ZERO, Accountant, Cost, DiscreteLaplace, Laplace, Mechanism, PrivacyUnit
from core.privacy.cost import EPSILON_MIN
from core.privacy.unit import UnitKind
from core.registry import Dataset
from core.spatial.baselines.ag import build_ag
from core.spatial.baselines.dawa import build_dawa
from core.spatial.baselines.dawa import privtree_constants as dawa_constants
from core.spatial.baselines.kdtree import build_kdtree
from core.spatial.baselines.privelet import privelet_sensitivity
from core.spatial.baselines.privtree import build_privtree, structure_sensitivity
from core.spatial.common import N_SHARE, count_mechanism
from core.spatial.grid import MAX_GRID, Grid
from core.spatial.htf import HTFParams
from core.spatial.methods import Door, Method, method
from core.spatial.pipeline import DEFAULT_GRID
from core.spatial.pipeline import Prepared as Binned
from core.spatial.regions import check_bbox
from core.spatial.release import Release
from core.spatial.unit import POINT, PersonUnit, Unit

BBox = tuple[float, float, float, float]
_N = "noisy number of points (sizes the structure)"  # the label of a sizing N


@dataclass(frozen=True)
class HTFOptions:
    """HTF's numeric parameters and §2.10 flags (the page's sidebar, `dpx htf`'s options); the
    defaults are the paper's (`core.spatial.htf.HTFParams`). A method takes only the ones its
    row of the method table lists (`Method.params`); a variant keeps its own flags."""

    eps_height: float = 1e-4
    eps_prt_level: float = 1e-3
    T: int = 3
    stop_count: float = 100.0
    stop_cells: int = 5
    height: int | None = None
    combine_pruned: bool = False
    consistency: bool = False
    cap_height: bool = False

    def keywords(self, row: Method) -> dict[str, float | int | bool | None]:
        """The builder keywords `row` takes (`Method.params`), typed values only: "htf" takes
        them all; a variant keeps its own §2.10 flags and its share-of-ε noisy N (its row lists
        neither, so these options cannot override what its builder fixes)."""
        return {k: v for k, v in asdict(self).items() if k in row.params}


@dataclass(frozen=True)
class LocationParams:
    """One location histogram as a person asked for it: public parameters only.

    `method`: a name of the method table (`core.spatial.methods.CATALOG`); `epsilon`: the
    release's total ε; `bbox` (MINLON, MINLAT, MAXLON, MAXLAT) and `rows` x `cols` (None: square)
    the public grid; `bbox_from_data`: a labelled demo run whose box is derived from the data
    (seeded noise on unregistered data only: `location_request` checks the noise); `lat`/`lon`
    the coordinate columns (None: detected); `person` and `max_points` the unit choice (a person
    column and at most K points each, both or neither); `htf` HTF's options (methods that take
    none ignore them). The noise (secure or seeded) is not a parameter: it is passed apart.
    """

    method: str
    epsilon: float
    bbox: BBox | None
    rows: int = DEFAULT_GRID
    cols: int | None = None
    lat: str | None = None
    lon: str | None = None
    person: str | None = None
    max_points: int | None = None
    htf: HTFOptions = field(default_factory=HTFOptions)
    bbox_from_data: bool = False

    def to_json(self) -> dict:
        """The public parameters a release records (`Request.params`)."""
        out = asdict(self)
        out["bbox"] = None if self.bbox is None else list(self.bbox)
        return out


@dataclass(frozen=True)
class StageBudget:
    """ε (and δ) one stage of a method spends, stated before drawing. `parts`: the keys of the
    release's `Release.epsilon` breakdown this stage covers (None: every part no other stage
    names — a stage whose split into parts follows noisy structure)."""

    stage: str
    epsilon: float
    parts: tuple[str, ...] | None
    what: str
    delta: float = 0.0

    @property
    def cost(self) -> Cost:
        return Cost(self.epsilon, self.delta)


@dataclass(frozen=True)
class LocationPrepared:
    """A checked location histogram: nothing read, nothing charged.

    `unit`: whom it protects (`core.privacy.PrivacyUnit`); `mechanisms`: the objects that will
    draw, where the method states them before drawing (else empty); `budgets`: ε per stage,
    always, composing to `cost`; `grid`: the public grid (None for a demo box from the data)."""

    params: LocationParams
    row: Method
    unit: PrivacyUnit
    grid: Grid | None
    mechanisms: tuple[Mechanism, ...]
    budgets: tuple[StageBudget, ...]

    @property
    def method(self) -> str:
        return self.row.name

    @property
    def cost(self) -> Cost:
        """(ε, δ) of the release: the composition (sum) of its stated mechanisms' costs, or of
        its stage budgets where the mechanisms follow noisy structure."""
        stated = self.mechanisms or self.budgets
        total = ZERO
        for part in stated:
            total = total + part.cost
        return total

    @property
    def spatial_unit(self) -> Unit:
        """The unit the builders scale sensitivities by: K points for a person, else 1."""
        if self.unit.kind is UnitKind.PERSON:
            return PersonUnit(str(self.unit.column), int(self.unit.max_contributions or 0))
        return POINT

    @property
    def keywords(self) -> dict:
        return self.params.htf.keywords(self.row)


def privacy_unit_of(unit: Unit, dataset: Dataset | None = None) -> PrivacyUnit:
    """The `PrivacyUnit` of counts bounded for `unit` (for code that holds a spatial unit
    only, e.g. the planners' pilot): a person with K points, else each row one person when the
    dataset declares so, else one record."""
    if isinstance(unit, PersonUnit):
        return PrivacyUnit.person(unit.column, unit.k)
    if dataset is not None and dataset.row_is_unit:
        return PrivacyUnit.row_is_person()
    return PrivacyUnit.record()


def location_params_from_json(data: dict) -> LocationParams:
    """The inverse of `LocationParams.to_json` (a recorded request read back)."""
    data = dict(data)
    data["htf"] = HTFOptions(**(data.get("htf") or {}))
    if data.get("bbox") is not None:
        data["bbox"] = tuple(float(v) for v in data["bbox"])
    return LocationParams(**data)


def prepare(params: LocationParams, dataset: Dataset | None = None) -> LocationPrepared:
    """Every check of a location histogram that needs no private data, in one place: the method
    (offered for release by the table), ε, the public box and grid, the unit (what the
    registered `dataset` declares, or the person column and K given for files given directly),
    HTF's options. Reads nothing, charges nothing; raises `InputError` naming the fix."""
    row = method(params.method, Door.RELEASE)
    eps = params.epsilon
    if isinstance(eps, bool) or not (isinstance(eps, int | float) and math.isfinite(eps)):
        raise InputError(f"--epsilon must be a finite number > 0, got {eps!r}.")
    if not eps > 0:
        raise InputError(f"--epsilon must be > 0, got {eps:g}.")
    if eps < EPSILON_MIN:
        raise InputError(
            f"--epsilon {eps:g} is below the smallest ε any release takes ({EPSILON_MIN:g}): its "
            f"noise would be beyond what can be drawn. Fix: give --epsilon {EPSILON_MIN:g} or more."
        )
    unit = _unit(params, dataset)
    grid = _grid(params, dataset)
    if row.params:
        p = params.htf
        HTFParams(**{**params.htf.keywords(row), "height": p.height}).validate(float(eps))
    mechanisms = _stated_mechanisms(row, float(eps), unit, params)
    budgets = _budgets(row, float(eps), params, mechanisms)
    asked = replace(  # as resolved: the table's name, the unit's column and K (a dataset's
        params,  # declared column fills an absent --uid), HTF's options where the method
        method=row.name,  # takes them (else the defaults, whatever the sidebar says)
        epsilon=float(eps),
        person=unit.column,
        max_points=unit.max_contributions,
        htf=params.htf if row.params else HTFOptions(),
    )
    return LocationPrepared(asked, row, unit, grid, mechanisms, budgets)


def _unit(params: LocationParams, dataset: Dataset | None) -> PrivacyUnit:
    """The privacy unit: the registered dataset's declaration wins (each row a person, or its
    person column, which then needs K); files given directly: the person column and K given,
    or one record."""
    person, k = params.person, params.max_points
    if dataset is not None and dataset.row_is_unit:
        if person is not None or k is not None:
            raise InputError(
                f"dataset '{dataset.name}' declares each row one person: drop the person column "
                "and --max-points-per-person (one point per row is already one person)."
            )
        return PrivacyUnit.row_is_person()
    if dataset is not None and dataset.uid:
        if person not in (None, dataset.uid):
            raise InputError(
                f"--uid {person} differs from dataset '{dataset.name}''s unit {dataset.uid}."
            )
        if k is None:
            raise InputError(
                f"dataset '{dataset.name}' protects people (column {dataset.uid}), who may have "
                "many points: add --max-points-per-person K (each person then keeps at most K "
                "points, chosen at random)."
            )
        person = dataset.uid
    if person is None and k is None:
        return PrivacyUnit.record()
    if person is None:
        raise InputError(
            "--max-points-per-person needs the person column: add --uid COL (without one, "
            "the unit is one point)."
        )
    if k is None:
        raise InputError(
            f"--uid {person} needs a bound: add --max-points-per-person K (each person then "
            "keeps at most K points)."
        )
    checked = PersonUnit(str(person), k)  # K: a whole number in [1, MAX_POINTS_LIMIT]
    return PrivacyUnit.person(checked.column, checked.k)


def _grid(params: LocationParams, dataset: Dataset | None) -> Grid | None:
    rows, cols = params.rows, params.rows if params.cols is None else params.cols
    for name, n in (("rows", rows), ("columns", cols)):
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 1 <= n <= MAX_GRID:
            raise InputError(f"grid {name} must be a whole number in 1..{MAX_GRID}, got {n!r}.")
    if params.bbox_from_data:
        if params.bbox is not None:
            raise InputError("give a public bounding box or derive it from the data, not both.")
        if dataset is not None:
            raise InputError(
                f"dataset '{dataset.name}' needs a public bounding box: pass --bbox or --region."
            )
        return None
    if params.bbox is None:
        raise InputError(
            "no --bbox given. The bounding box is public and must not come from the private "
            "data: pass --bbox MINLON,MINLAT,MAXLON,MAXLAT or --region NAME."
        )
    return Grid(int(rows), int(cols), check_bbox(params.bbox))


# -- what each method states before drawing -------------------------------------------------------
def _stated_mechanisms(
    row: Method, eps: float, unit: PrivacyUnit, params: LocationParams
) -> tuple[Mechanism, ...]:
    """The mechanism objects of a method none of whose labels, sensitivities or ε depends on
    the data (identity, uniform, privelet, ug, ag, privtree, dawa: their noisy structure
    changes what the objects measure, not which objects draw); empty for the others."""
    k = unit.max_contributions if unit.kind is UnitKind.PERSON else 1
    su = POINT if k == 1 else PersonUnit(str(unit.column), int(k))
    rows, cols = params.rows, params.rows if params.cols is None else params.cols
    name = row.name
    if name == "identity":
        return (count_mechanism("identity: every cell count (disjoint cells)", eps, su),)
    if name == "uniform":
        return (count_mechanism("uniform: total number of points (one measurement)", eps, su),)
    if name == "privelet":
        s = privelet_sensitivity(int(rows), int(cols))
        label = "privelet: all Haar coefficients (one vector)"
        return (DiscreteLaplace(label, sensitivity=s * su.max_points, epsilon=eps),)
    if name == "ug":
        eps_n = N_SHARE * eps
        return (
            Laplace("ug: " + _N, sensitivity=su.max_points, epsilon=eps_n),
            count_mechanism("ug: grid cell counts (disjoint cells)", eps - eps_n, su),
        )
    if name == "ag":
        eps_n = N_SHARE * eps
        eps_c = eps - eps_n
        alpha = _default(build_ag, "alpha")
        return (
            Laplace("ag: " + _N, sensitivity=su.max_points, epsilon=eps_n),
            count_mechanism("ag: first-level cell counts (disjoint cells)", alpha * eps_c, su),
            count_mechanism(
                "ag: second-level sub-cell counts (disjoint cells)", (1 - alpha) * eps_c, su
            ),
        )
    if name == "dawa" and int(rows) * int(cols) > 1:  # one cell: no partition (all counts)
        eps1 = _default(build_dawa, "ratio") * eps
        return (
            Laplace(
                "dawa: biased L1 deviations of the Hilbert runs steering the splits "
                "(PrivTree theorem, whole run tree)",
                sensitivity=dawa_constants(eps1, su.max_points)[0],
                epsilon=eps1,
            ),
            count_mechanism("dawa: bucket counts (disjoint buckets)", eps - eps1, su),
        )
    if name == "privtree":
        beta = _default(build_privtree, "beta")
        return (
            Laplace(
                "privtree: biased node counts steering the splits (PrivTree theorem, whole tree)",
                sensitivity=structure_sensitivity(beta, su.max_points),
                epsilon=eps / 2,
            ),
            count_mechanism("privtree: leaf counts (disjoint leaves)", eps / 2, su),
        )
    return ()


def _default(build, name: str) -> float:
    """A builder's default share (the doors set none): read off its signature, so the stated
    split is the one the builder uses."""
    return float(inspect.signature(build).parameters[name].default)


# Adaptive methods: the split of ε between their stages is public (shares of ε fixed by the
# builder's defaults); what each stage's mechanisms are follows the noisy structure.
_KDTREES = ("kdtree-geo", "kdtree-uniform", "kdtree-hybrid")
_QUADTREES = ("quadtree", "quadtree-leaves")
# Adaptive methods whose stages' shares themselves follow noisy statistics (auto: the features'
# shares follow its noisy N) or the domain (hb: its number of levels): one stage.
_WHOLE = {
    "auto": "noisy features (a share set by the noisy N), then the method they choose",
    "hb": "one level of the hierarchy after another (disjoint nodes each)",
}
_HTF_FAMILY = ("htf", "htf+", "htf-combine", "htf-consistency", "htf-cap")
STAGED = frozenset({
    "identity", "uniform", "privelet", "ug", "ag", "privtree", "dawa", *_KDTREES, *_QUADTREES,
    *_WHOLE, *_HTF_FAMILY,
})  # fmt: skip


def _budgets(
    row: Method, eps: float, params: LocationParams, stated: tuple[Mechanism, ...]
) -> tuple[StageBudget, ...]:
    """ε per stage (see the module docstring); they compose to the release's cost. Each stage
    names the parts of `Release.epsilon` it covers (a test holds every method to it)."""
    name = row.name
    eps_n = N_SHARE * eps
    if name in ("identity", "uniform", "privelet"):
        return (StageBudget("count", eps, ("count",), stated[0].label),)
    if name == "ug":
        return (
            StageBudget("n", eps_n, ("n",), _N),
            StageBudget("count", eps - eps_n, ("count",), "grid cell counts (disjoint cells)"),
        )
    if name in _QUADTREES:
        return (
            StageBudget("n", eps_n, ("n",), _N),
            StageBudget("count", eps - eps_n, ("count",), "node counts, every level (geometric)"),
        )
    if name in _KDTREES:
        rest = eps - eps_n
        split = _default(build_kdtree, "split_share") * rest
        return (
            StageBudget("n", eps_n, ("n",), _N),
            StageBudget("split", split, ("split",), "noisy medians (exponential mechanism)"),
            StageBudget("count", rest - split, ("count",), "node counts per level"),
        )
    if name == "ag":
        rest = eps - eps_n
        level1 = _default(build_ag, "alpha") * rest
        return (
            StageBudget("n", eps_n, ("n",), _N),
            StageBudget("level1", level1, ("level1",), "first-level cell counts"),
            StageBudget("level2", rest - level1, ("level2",), "second-level sub-cell counts"),
        )
    if name == "privtree":  # PrivTree's theorem: half on the structure, half on the leaves
        return (
            StageBudget("structure", eps / 2, ("structure",), "biased node counts (splits)"),
            StageBudget("count", eps - eps / 2, ("count",), "leaf counts (disjoint leaves)"),
        )
    if name == "dawa":
        one_cell = params.rows * (params.rows if params.cols is None else params.cols) == 1
        partition = 0.0 if one_cell else _default(build_dawa, "ratio") * eps
        return (
            StageBudget("partition", partition, ("partition",), "the data-aware partition"),
            StageBudget("counts", eps - partition, ("counts",), "bucket counts"),
        )
    if name in _HTF_FAMILY:
        if params.htf.height is not None:  # a fixed height: no noisy N is bought
            eps_h = 0.0
        else:  # the variants buy their N with a share of ε (their builders fix eps_height=None)
            own = params.htf.eps_height if name == "htf" else None
            eps_h = HTFParams(eps_height=own).eps_height_for(eps)
        stages = [] if eps_h == 0 else [
            StageBudget("height", eps_h, ("height",), "noisy N (sizes the height)")
        ]  # fmt: skip
        what = "split search per level (h levels: h from the noisy N), then the counts on each "
        what += "root-to-leaf path (geometric)"
        return (*stages, StageBudget("partition and data", eps - eps_h, None, what))
    if name in _WHOLE:
        return (StageBudget("whole", eps, None, _WHOLE[name]),)
    raise AssertionError(f"method {name!r} states no budget: add it to core/spatial/service.py")


# -- the release -----------------------------------------------------------------------------
def check_binned(prepared: LocationPrepared, data: Binned) -> None:
    """The binned counts fit the prepared release: the same public grid, and bounded for the
    same unit (K points per person). A mismatch is a fault of the caller; it is refused before
    a charge where the data was binned first (the page), or before the build otherwise."""
    if prepared.grid is not None and (
        (data.grid.ny, data.grid.nx) != (prepared.grid.ny, prepared.grid.nx)
        or tuple(data.grid.bbox) != tuple(prepared.grid.bbox)
    ):
        raise InputError("the binned points are not on the prepared grid: bin them again.")
    if data.unit != prepared.spatial_unit:
        raise InputError(
            "the points were bounded for another unit than the release protects: bin them "
            "again with the person column and K."
        )


def run(prepared: LocationPrepared, data: Binned, accountant: Accountant) -> Release:
    """Build the histogram of the binned counts `data.F`. Charges nothing: the caller charged
    `prepared.cost` and passes `Accountant(noise, budget=prepared.cost)`.

    Privacy claim: the release is ε-DP, ε = `prepared.cost.epsilon` (δ = 0), for
    `prepared.unit` (one row; each row one person; or a person with at most K points, the
    counts bounded so when they were binned: every sensitivity is K times a point's). Every
    noisy statistic is drawn by a mechanism object on `accountant` (Laplace / discrete Laplace
    / lattice Laplace / exponential, sensitivity stated on each), in the stages of
    `prepared.budgets`; a draw past the charge is refused before it draws (`Overdraw`)."""
    accountant.require(prepared.cost, f"{prepared.method} (the whole release)")
    check_binned(prepared, data)
    return prepared.row.build(
        data.F,
        prepared.params.epsilon,
        accountant,
        unit=prepared.spatial_unit,
        **prepared.keywords,
    )
