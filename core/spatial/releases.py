"""Location histograms as two steps: build the releases (charged), then evaluate them (not).

1. `build_releases(F, methods, epsilon, noise_for, charge, unit=...)` builds one release per
   chosen method, each charged once — `epsilon` per method, before its builder reads the data —
   to a `Charge`: an in-memory total (`LedgerCharge`) or the release registry (`RegistryCharge`,
   one registry release per method, its leaves and mechanism rows attached after the build).
   Each build draws on its own `Accountant(noise, budget=Cost(epsilon))`, so the builder cannot
   spend more than its charge, and `release.mechanisms` is exactly what drew its noise.
   These are the releases a map shows.
2. `evaluate(releases, F, ...)` scores them against the raw data: the MRE of each charged
   release on fresh random queries, and the MRE over `reps` evaluation-only rebuilds
   (`core.spatial.evaluate.compare`). Evaluation reads the true data and is never released: its
   outputs are owner-only, and what its rebuilds would cost is reported as
   `evaluation_epsilon`, never charged to a budget.

Composition is basic: k methods at ε each cost k·ε of the dataset's budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.errors import BudgetExceededError, InputError
from core.privacy import Accountant, Cost, Noise
from core.registry import Claim, Mechanism, Registry
from core.spatial.evaluate import EVALUATION_LABEL, Comparison, compare, stream
from core.spatial.grid import Grid
from core.spatial.methods import get_method
from core.spatial.queries import (
    DEFAULT_SIZES,
    DEFAULT_SMOOTHING,
    answer,
    prefix_sums,
    random_queries,
    relative_errors,
)
from core.spatial.record import location_artefact
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

UNIT = POINT.describe()


@dataclass(frozen=True)
class PlannedRelease:
    """One method's release before it is built: what will be charged for it, and for whom."""

    method: str
    epsilon: float
    params: dict = field(default_factory=dict)
    unit: Unit = POINT

    @property
    def cost(self) -> Cost:
        return Cost(self.epsilon)


@dataclass(frozen=True)
class ChargedRelease:
    """A built release and the charge that paid for it (`charge_id`: e.g. a registry id)."""

    method: str
    epsilon: float
    release: Release
    noise_label: str
    charge_id: int | None = None


class LedgerCharge:
    """Charges an in-memory total (`total_epsilon`; None: unlimited): one charge of ε per method."""

    def __init__(self, total_epsilon: float | None = None):
        self.total = None if total_epsilon is None else Cost(float(total_epsilon))
        self.charged: list[PlannedRelease] = []

    @property
    def epsilon_spent(self) -> float:
        return float(sum(p.epsilon for p in self.charged))

    def _refuse_unless_fits(self, plans: Sequence[PlannedRelease]) -> None:
        need = self.epsilon_spent + sum(p.epsilon for p in plans)
        if self.total is not None and not Cost(need).fits(self.total):
            raise BudgetExceededError(
                f"privacy budget exceeded: {len(plans)} release(s) need epsilon "
                f"{sum(p.epsilon for p in plans):g}; remaining epsilon "
                f"{max(0.0, self.total.epsilon - self.epsilon_spent):g}. Nothing was charged."
            )

    def check(self, plans: Sequence[PlannedRelease]) -> None:
        self._refuse_unless_fits(plans)

    def charge(self, plan: PlannedRelease) -> int | None:
        self._refuse_unless_fits([plan])
        self.charged.append(plan)
        return None

    def attach(self, charged: ChargedRelease) -> None:
        """Nothing to attach: an in-memory total keeps charges, not artefacts."""


class RegistryCharge:
    """Charges a registered dataset (or records an unregistered run: `dataset=None`); the tool
    of each registry release is the method's name, its artefact the released leaves."""

    def __init__(
        self,
        registry: Registry,
        dataset: str | None,
        mode: str,
        params: dict,
        grid: Grid,
    ):
        self.registry, self.dataset, self.mode, self.params = registry, dataset, mode, params
        self.grid = grid  # the public grid, for the record (reports draw the leaves on it)

    def check(self, plans: Sequence[PlannedRelease]) -> None:
        """Refuse the whole set early when it cannot fit (each charge re-checks atomically)."""
        if self.dataset is None or self.mode == "seeded":
            return
        needed = sum(p.epsilon for p in plans)
        eps_left, _ = self.registry.remaining(self.dataset)
        if needed > eps_left + 1e-9:
            reason = (
                f"privacy budget of dataset '{self.dataset}' exceeded: {len(plans)} release(s) "
                f"need epsilon {needed:g}; remaining epsilon {eps_left:g}. Nothing was charged."
            )
            self.registry.refuse("location", self.dataset, reason, self.params)
            raise BudgetExceededError(reason)

    def charge(self, plan: PlannedRelease) -> int:
        mechanism = Mechanism(f"{plan.method}: location histogram", plan.epsilon)
        params = {**self.params, **plan.params, "method": plan.method, "epsilon": plan.epsilon}
        record = self.registry.charge(
            "location",
            self.dataset,
            params,
            [mechanism],
            self.mode,
            privacy=Claim(unit=plan.unit.describe(), unit_column=plan.unit.column),
        )
        return record.id

    def attach(self, charged: ChargedRelease) -> None:
        """The release's typed record (`core.spatial.record`: leaves on the public grid, each
        leaf's noise scale, the unit) and the mechanism objects that drew."""
        rel = charged.release
        artefact = location_artefact(rel, self.grid).to_json()
        self.registry.attach(charged.charge_id, artefact, rel.mechanisms)


def build_releases(
    F: np.ndarray,
    methods: Sequence[str],
    epsilon: float,
    noise_for: Callable[[str], Noise],
    charge: LedgerCharge | RegistryCharge,
    method_params: dict[str, dict] | None = None,
    unit: Unit = POINT,
) -> list[ChargedRelease]:
    """One ε-DP location histogram per method, each charged once before it is built.

    Privacy claim: each release is `epsilon`-DP for `unit` (one point, or one person with at
    most K points: F must have been built with that bound, `core.spatial.persons`); its
    builder's mechanisms draw on an `Accountant` whose budget is `epsilon`, so they cannot
    spend more; the set costs len(methods)·`epsilon` under basic composition. The whole set is
    checked against the budget first (all refused, nothing built, if it does not fit), then
    each method is charged and only then built. `noise_for(method)` gives its noise source.
    """
    if not (isinstance(epsilon, (int, float)) and np.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be a finite number > 0, got {epsilon}.")
    if not methods:
        raise InputError("choose at least one method.")
    method_params = method_params or {}
    builders = {m: get_method(m) for m in methods}  # unknown names refused before any charge
    plans = [
        PlannedRelease(m, float(epsilon), dict(method_params.get(m, {})), unit) for m in methods
    ]
    charge.check(plans)
    built: list[ChargedRelease] = []
    for plan in plans:
        charge_id = charge.charge(plan)
        noise = noise_for(plan.method)
        accountant = Accountant(noise, budget=plan.cost)  # no more than its charge
        release = builders[plan.method](F, plan.epsilon, accountant, unit=unit, **plan.params)
        charged = ChargedRelease(plan.method, plan.epsilon, release, noise.label, charge_id)
        charge.attach(charged)
        built.append(charged)
    return built


@dataclass(frozen=True)
class Evaluation:
    """Owner-only accuracy of charged releases (not differentially private)."""

    released_mre: dict[str, float]  # each charged release, on one fresh query set
    comparison: Comparison  # MRE over `reps` evaluation-only rebuilds of each method
    evaluation_epsilon: float  # what those rebuilds consumed; not released, never charged
    label: str = EVALUATION_LABEL

    def table(self) -> list[dict]:
        """One row per method: the release's MRE, the rebuilds' mean ± std and their ε."""
        per_method = {r["method"]: r for r in self.comparison.overall}
        reps = self.comparison.params["reps"]
        eps = self.comparison.params["epsilon"]
        return [
            {
                "method": m,
                "released_mre": mre,
                "mre_over_reps": per_method[m]["mre"],
                "mre_std": per_method[m]["mre_std"],
                "reps": reps,
                "evaluation_epsilon": reps * eps,
            }
            for m, mre in self.released_mre.items()
        ]


def evaluate(
    releases: Sequence[ChargedRelease],
    F: np.ndarray,
    sizes: Sequence[float] = DEFAULT_SIZES,
    n_queries: int = 2000,
    reps: int = 3,
    smoothing: float = DEFAULT_SMOOTHING,
    seed: int | None = None,
    shape: str = "random",
    method_params: dict[str, dict] | None = None,
    progress: Callable[[float, str], None] | None = None,
    unit: Unit = POINT,
) -> Evaluation:
    """Score charged releases against the raw data F (evaluation only; owner mode).

    Reads the true counts: NOT differentially private and never released. Charges nothing;
    the `reps` rebuilds per method (fresh evaluation noise streams) are reported as
    `evaluation_epsilon` = reps · Σ ε, shown as evaluation cost, not as released budget."""
    if not releases:
        raise InputError("no releases to evaluate: build them first.")
    epsilons = {r.epsilon for r in releases}
    if len(epsilons) != 1:
        raise InputError("evaluate releases built with one epsilon at a time.")
    ny, nx = F.shape
    S = prefix_sums(F.astype(np.int64))
    released_mre: dict[str, float] = {}
    queries = {
        f: random_queries(ny, nx, f, n_queries, stream(seed, reps, f"released:{f}"), shape)
        for f in sizes
    }
    truth = {f: answer(S, Q) for f, Q in queries.items()}
    for r in releases:
        P = prefix_sums(r.release.density_raster(ny, nx))
        errors = [relative_errors(answer(P, queries[f]), truth[f], smoothing) for f in sizes]
        released_mre[r.method] = float(np.concatenate(errors).mean())
    eps = releases[0].epsilon
    methods = [r.method for r in releases]
    comparison = compare(
        F, eps, methods, sizes, n_queries, reps, smoothing,
        None if seed is None else seed + 1,  # a seed of its own, not the releases' seed
        method_params, shape, progress, unit=unit,
    )  # fmt: skip
    return Evaluation(released_mre, comparison, reps * eps * len(methods))
