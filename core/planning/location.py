"""Plan a location histogram backwards: from a target MRE to the ε each method needs.

MRE depends on the data's private shape, so the planner rests on a stated basis
(`core.planning.shape`): a charged pilot's noisy shape, or a declared public size and shape.
For each candidate ε it builds each method with the project's own builders on several
synthetic point sets of that shape (each build on its own throwaway accountant: simulations
release nothing and charge nothing) and scores them on random range queries exactly as the
owner's evaluation does (`core.spatial.queries`: sizes, smoothing, placement). The same
synthetic sets and query sets are used at every ε (paired curves), so the curve of the median
MRE over ε is smooth enough to read the crossing off (`core.spatial.tuning.smallest_epsilon`,
the owner's tuning view's own rule); at the planned ε a fresh set of draws gives the range,
and while its mid misses the target the ε is raised by 15 % and simulated again, so the ε a
plan states is one at which the predicted mid meets the target.

Two readings of the same basis. A pilot cannot see below its own resolution, so the planner
simulates two placements of the points it cannot resolve (`core.planning.shape.Placement`):
the SMOOTH one (leaves as clumpy inside as the pilot's own splits) gives the predicted low and
mid, and the ε a plan states; the ROUGH one (leaves within the pilot's noise empty, the other
leaves' points along lines) is the roughest data consistent with the pilot and bounds the
predicted high, and with it the cautious ε. The high is the largest simulated MRE over both
placements, so it is never below the smooth placement's own high.

Model error. Even so, a pilot cannot see the data below its own resolution, so simulated MRE differs
from the MRE a real release realises by a factor that depends on the data. The factors
`ALLOWANCE` widen the simulated [min, median, max] into the predicted [low, mid, high]; they
were measured once on a TRAINING collection of point sets (bench/plan_calibration.py --fit,
docs/benchmarks/plan_calibration.md) and are checked on point sets that were not used to set
them (bench/plan_calibration.py). They are stated with every plan.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from core.errors import InputError
from core.planning.search import round_up
from core.planning.shape import PilotShape, Placement, Shape
from core.privacy import Accountant, Cost, Noise
from core.spatial.methods import LABELS, get_method
from core.spatial.queries import (
    DEFAULT_SIZES,
    DEFAULT_SMOOTHING,
    answer,
    prefix_sums,
    random_queries,
    relative_errors,
)
from core.spatial.tuning import Reach, TuningPoint, smallest_epsilon
from core.spatial.unit import POINT, Unit

EPSILONS = tuple(float(f"{v:.3g}") for v in np.exp(np.linspace(math.log(0.01), math.log(10), 11)))
SEARCH_DRAWS = 3
RANGE_DRAWS = 6
ROUGH_SEARCH_DRAWS = 2  # rough-placement draws per ε on the search grid (the cautious ε)
ROUGH_RANGE_DRAWS = 3  # and at the planned ε (the predicted high)
QUERIES = 400  # per query size and draw
# Simulated-to-realised MRE factors (low, mid, high), measured with a pilot at ε 0.2 on the
# training collection of bench/plan_calibration.py --fit (13 point sets, 260 cells;
# docs/benchmarks/plan_calibration.md): low = the 5th percentile of realised / smooth minimum,
# mid = the median of realised / smooth median, high = the 95th percentile of realised / the
# largest simulated MRE of either placement. (Before the rough placement and the larger
# training collection they were 0.82/1.00/1.24.)
ALLOWANCE = (0.88, 1.11, 1.29)
RECOMMENDED = "auto"
STEP_UP, MAX_STEPS_UP = 1.15, 6  # re-simulate at ε x 1.15 while the range's mid misses


@dataclass(frozen=True)
class Prediction:
    """Predicted MRE of a release at one ε: [low, mid, high], the simulated values of the
    smooth placement (low and mid) and of the rough one (with them, the high)."""

    epsilon: float
    low: float
    mid: float
    high: float
    simulated: tuple[float, ...]
    rough: tuple[float, ...] = ()

    def as_list(self) -> list[float]:
        return [self.low, self.mid, self.high]


@dataclass(frozen=True)
class MethodPlan:
    """One method's plan: the ε at which its predicted mid MRE meets the target (None when no
    ε up to the search's ceiling does), its predicted range there, and the larger ε at which
    even the predicted high meets it (the cautious choice)."""

    method: str
    label: str
    epsilon: float | None
    reach: Reach
    predicted: Prediction | None
    cautious_epsilon: float | None
    curve: tuple[tuple[float, float], ...]  # (ε, predicted mid) on the search grid

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "label": self.label,
            "epsilon": self.epsilon,
            "reach": self.reach.name.lower(),
            "predicted_mre": None if self.predicted is None else self.predicted.as_list(),
            "simulated_mre": None if self.predicted is None else list(self.predicted.simulated),
            "simulated_rough_mre": None if self.predicted is None else list(self.predicted.rough),
            "cautious_epsilon": self.cautious_epsilon,
            "curve": [{"epsilon": e, "predicted_mre": m} for e, m in self.curve],
        }


@dataclass(frozen=True)
class LocationPlan:
    """The location planner's answer (one row per method) and what it rests on."""

    target: float
    query_sizes: tuple[float, ...]
    smoothing: float
    methods: tuple[MethodPlan, ...]
    basis: str
    pilot_epsilon: float
    unit: Unit

    @property
    def best(self) -> MethodPlan | None:
        """The method meeting the target at the smallest ε."""
        reached = [m for m in self.methods if m.epsilon is not None]
        return min(reached, key=lambda m: m.epsilon) if reached else None

    def describe(self) -> str:
        best = self.best
        if best is None:
            names = ", ".join(m.label for m in self.methods)
            return (
                f"No epsilon up to {EPSILONS[-1]:g} is predicted to reach MRE {self.target:g} "
                f"with {names}; this rests on {self.basis}."
            )
        p = best.predicted
        note = ""
        if 0 < best.epsilon < self.pilot_epsilon:
            note = (
                f" The pilot (epsilon {self.pilot_epsilon:g}) already spent more than this "
                "release needs; it is itself a PrivTree release of the data."
            )
        return (
            f"{best.label} at epsilon {best.epsilon:g} is predicted to give MRE {p.mid:.3g} "
            f"(likely between {p.low:.3g} and {p.high:.3g}) against the target {self.target:g}; "
            f"this rests on {self.basis}.{note}"
        )

    def to_json(self) -> dict:
        best = self.best
        return {
            "tool": "location",
            "target_mre": self.target,
            "epsilon": None if best is None else best.epsilon,
            "method": None if best is None else best.method,
            "pilot_epsilon": self.pilot_epsilon,
            "predicted_mre": None if best is None else best.predicted.as_list(),
            "cautious_epsilon": None if best is None else best.cautious_epsilon,
            "per_method": [m.to_json() for m in self.methods],
            "query_sizes": list(self.query_sizes),
            "smoothing": self.smoothing,
            "unit": self.unit.describe(),
            "allowance": list(ALLOWANCE),
            "basis": self.basis,
            "describe": self.describe(),
        }


def plan_location(
    shape: Shape,
    methods: Sequence[str],
    target: float,
    *,
    unit: Unit = POINT,
    query_sizes: Sequence[float] = DEFAULT_SIZES,
    smoothing: float = DEFAULT_SMOOTHING,
    seed: int = 0,
    progress: Callable[[float, str], None] | None = None,
) -> LocationPlan:
    """For each method, the smallest ε whose predicted mid MRE meets `target` on `shape`, the
    predicted [low, mid, high] there and the cautious ε (high meets the target).

    Reads no data and charges nothing: every build is a simulation on synthetic point sets
    with its own throwaway accountant; `seed` makes the plan reproducible (simulation noise is
    not a release)."""
    if not (math.isfinite(target) and 0 < target < 1e6):
        raise InputError(f"--target-mre must be a number > 0, got {target}.")
    if not methods:
        raise InputError("name at least one method (e.g. --method auto).")
    sizes = tuple(float(f) for f in query_sizes)
    if not sizes or any(not 0 < f <= 1 for f in sizes):
        raise InputError(f"query areas are fractions of the box in (0, 1], got {list(sizes)}.")
    for m in methods:
        get_method(m)
    sim = _Simulator(shape, sizes, smoothing, unit, seed)
    plans = []
    for i, method in enumerate(methods):
        step = None if progress is None else _sub_progress(progress, i, len(methods), method)
        plans.append(_plan_method(sim, method, float(target), step))
    pilot_eps = shape.pilot.epsilon if isinstance(shape, PilotShape) else 0.0
    return LocationPlan(
        target=float(target),
        query_sizes=sizes,
        smoothing=float(smoothing),
        methods=tuple(plans),
        basis=_basis(shape, sizes),
        pilot_epsilon=pilot_eps,
        unit=unit,
    )


def _basis(shape: Shape, sizes) -> str:
    share = ", ".join(f"{f:.0%}" for f in sizes)
    return (
        f"{shape.basis()}; releases were simulated on synthetic point sets of that shape and "
        f"scored on random range queries covering {share} of the box, the range widened by "
        f"factors {ALLOWANCE[0]:g}/{ALLOWANCE[1]:g}/{ALLOWANCE[2]:g} measured on training "
        "point sets"
    )


def _sub_progress(progress, i, n, method):
    def step(frac: float, text: str) -> None:
        progress((i + frac) / n, f"{method}: {text}")

    return step


class _Simulator:
    """Synthetic sets, their query sets and true answers, reused at every ε (paired)."""

    def __init__(self, shape: Shape, sizes, smoothing, unit, seed):
        self.shape, self.sizes, self.smoothing, self.unit = shape, sizes, smoothing, unit
        self.seed = int(seed)
        self._sets: dict[tuple[str, int, Placement], tuple[np.ndarray, dict, dict]] = {}

    def _set(self, batch: str, d: int, placement: Placement = Placement.SMOOTH):
        key = (batch, d, placement)
        if key not in self._sets:
            stream = batch if placement is Placement.SMOOTH else f"{batch}:{placement.value}"
            rng = np.random.default_rng([self.seed, zlib.crc32(stream.encode()), d])
            F = self.shape.draw(rng, placement)
            ny, nx = F.shape
            qnoise = Noise.seeded(int(rng.integers(2**62)))
            Q = {f: random_queries(ny, nx, f, QUERIES, qnoise) for f in self.sizes}
            S = prefix_sums(F)
            self._sets[key] = (F, Q, {f: answer(S, q) for f, q in Q.items()})
        return self._sets[key]

    def mre(self, method: str, eps: float, batch: str, d: int, placement=Placement.SMOOTH) -> float:
        F, Q, truth = self._set(batch, d, placement)
        tag = "" if placement is Placement.SMOOTH else f":{placement.value}"
        stream = zlib.crc32(f"{method}:{eps:.6g}{tag}".encode())
        accountant = Accountant(Noise.seeded(self.seed * 7919 + stream + d), Cost(eps))
        rel = get_method(method)(F, eps, accountant, unit=self.unit)
        P = prefix_sums(rel.density_raster(*F.shape))
        errors = [relative_errors(answer(P, Q[f]), truth[f], self.smoothing) for f in self.sizes]
        return float(np.concatenate(errors).mean())


def _predict(
    sim: _Simulator, method: str, eps: float, batch: str, draws: int, rough_draws: int = 0
) -> Prediction:
    """Low and mid from the smooth placement's draws; high from the largest of all draws,
    rough placement included when the basis has one (so never below the smooth high)."""
    values = tuple(sim.mre(method, eps, batch, d) for d in range(draws))
    rough = ()
    if Placement.ROUGH in sim.shape.placements:
        rough = tuple(sim.mre(method, eps, batch, d, Placement.ROUGH) for d in range(rough_draws))
    lo, mid, hi = ALLOWANCE
    return Prediction(
        epsilon=eps,
        low=float(min(values) * lo),
        mid=float(np.median(values) * mid),
        high=float(max(values + rough) * hi),
        simulated=values,
        rough=rough,
    )


def _plan_method(sim: _Simulator, method: str, target: float, progress) -> MethodPlan:
    curve = []
    for k, eps in enumerate(EPSILONS):
        if progress:
            progress(k / (len(EPSILONS) + 1), f"epsilon {eps:g}")
        curve.append(_predict(sim, method, eps, "search", SEARCH_DRAWS, ROUGH_SEARCH_DRAWS))
    mids = [TuningPoint(p.epsilon, p.mid, None) for p in curve]
    highs = [TuningPoint(p.epsilon, p.high, None) for p in curve]
    found = smallest_epsilon(mids, target)
    cautious = smallest_epsilon(highs, target)
    label = LABELS.get(method, method)
    points = tuple((p.epsilon, p.mid) for p in curve)
    if found.epsilon is None:
        return MethodPlan(method, label, None, found.reach, None, None, points)
    eps = round_up(found.epsilon)
    if progress:
        progress(len(EPSILONS) / (len(EPSILONS) + 1), f"range at epsilon {eps:g}")
    predicted = _predict(sim, method, eps, "range", RANGE_DRAWS, ROUGH_RANGE_DRAWS)
    for _ in range(MAX_STEPS_UP):  # fresh draws may sit above the curve: step until mid meets
        if predicted.mid <= target or eps >= EPSILONS[-1]:
            break
        eps = round_up(min(eps * STEP_UP, EPSILONS[-1]))
        predicted = _predict(sim, method, eps, "range", RANGE_DRAWS, ROUGH_RANGE_DRAWS)
    careful = None if cautious.epsilon is None else max(round_up(cautious.epsilon), eps)
    return MethodPlan(method, label, eps, found.reach, predicted, careful, points)


def recommended_methods(names: str | Sequence[str]) -> list[str]:
    """Method names from `--method` (comma-separated; 'recommended' is 'auto')."""
    items = names.split(",") if isinstance(names, str) else list(names)
    out = []
    for raw in items:
        name = raw.strip().lower()
        if not name:
            continue
        name = RECOMMENDED if name in ("recommended", RECOMMENDED) else name
        get_method(name)
        if name not in out:
            out.append(name)
    if not out:
        raise InputError("name at least one method (e.g. --method auto).")
    return out
