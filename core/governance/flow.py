"""The one governed flow every release of every tool takes, from the CLI and from the pages.

    plan  →  policies  →  charge  →  compute  →  attach
          (refused: recorded,    (one atomic     (an Accountant     (the artefact and the
           nothing charged)       transaction)    holding the        mechanisms that drew;
                                                  charge)            a failure keeps the charge)

1. The caller states the request: tool, role, the registered dataset (or None for files the
   owner gives directly), public parameters, the planned cost — derived from the very mechanism
   objects that will draw — the claim (unit, and PP's (ρ1, ρ2)) and the noise source.
2. Policies that need no data: the role (an analyst works on registered datasets with secure
   noise only), seeded noise only on `teaching` datasets, and the tool's own (`extra_checks`,
   e.g. PP's publishable columns, DP SQL's unit). A refusal is recorded and charges nothing.
3. The registry charges the dataset in one transaction (budget and per-query caps re-read
   under a write lock; over-budget is refused and recorded).
4. `compute(accountant)` runs with an `Accountant` whose budget is the charge: every noisy draw
   records its mechanism, and a draw beyond the charge is refused before it draws.
5. The artefact (released values and public parameters only) and `accountant.mechanisms` are
   attached. A computation that fails after the charge keeps the charge and is marked failed
   (an exception that is not an `InputError` is reported as a fault of DP Explorer: every
   check of the request belongs in step 2);
   an artefact the registry cannot record (a full disk) marks the run undelivered when it can,
   and `dpx dataset reconcile` closes it later.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from core.errors import BudgetExceededError, InputError
from core.governance.roles import ANALYST_VAR, Role, RoleError, current_analyst
from core.privacy import Accountant, Cost, Noise, RhoClaim
from core.privacy.cost import check_budget
from core.registry import Claim, Dataset, Registry, Release, RunKind
from core.registry.store import RegistryError

T = TypeVar("T")

Check = Callable[[], None]


@dataclass(frozen=True)
class Request:
    """What is about to be released, stated before any data is read."""

    tool: str
    role: Role
    dataset: Dataset | None  # None: files given directly by the owner (an unregistered run)
    params: dict
    cost: Cost
    claim: Claim
    noise: Noise
    rho: RhoClaim | None = None
    extra_checks: tuple[Check, ...] = field(default=())
    error_code: str = ""  # a tool's code for a failure after the charge (DP SQL: "DPX-E009")
    # the analyst charged with the release (their share, issue 33); None: the declared
    # identity (`DPX_ANALYST`) in analyst mode, nobody in owner mode
    analyst: str | None = None

    @property
    def charged_to(self) -> str | None:
        """The analyst whose share this release is charged to (None: the owner)."""
        if self.role is not Role.ANALYST:
            return None
        return self.analyst or current_analyst()

    @property
    def mode(self) -> str:
        return self.noise.mode


@dataclass(frozen=True)
class Governed(Generic[T]):
    """A release that went through the flow: its registry record and the tool's result.
    `record` is None only for an owner's unregistered run whose registry could not be opened."""

    record: Release | None
    result: T


class ComputeFailed(InputError):
    """The computation failed after the charge (the charge stands; the message says so)."""


class Undelivered(InputError):
    """Computed, but the registry could not record the artefact (the charge stands)."""


def check_policies(request: Request) -> None:
    """Every refusal that needs no data. Raises `InputError` (one line) on the first failure."""
    if request.role is Role.ANALYST:
        if request.dataset is None:
            raise RoleError(
                "analyst mode works on registered datasets only. Fix: choose a registered "
                "dataset (the data owner registers one with `dpx dataset add`)."
            )
        if not request.noise.is_secure:
            raise RoleError("analyst mode uses secure noise only. Fix: drop --seed.")
    d = request.dataset
    if d is not None and not request.noise.is_secure and not d.teaching:
        raise InputError(
            f"seeded (demo) noise is refused on registered dataset '{d.name}': it is not "
            "flagged --teaching. Fix: drop --seed (secure noise)."
        )
    for check in request.extra_checks:
        check()


def govern(
    registry: Registry | None,
    request: Request,
    compute: Callable[[Accountant], T],
    artefact_of: Callable[[T], dict],
) -> Governed[T]:
    """Run `request` through policies, charge, compute and attach (see the module docstring).

    Privacy claim: the dataset is charged `request.cost` — composed from the mechanism objects
    that will draw — in one registry transaction before `compute` reads any data; `compute`
    draws only through an `Accountant` holding that charge, and the recorded mechanism rows
    are exactly the objects that drew.
    """
    dataset = None if request.dataset is None else request.dataset.name
    if registry is None and dataset is not None:
        raise InputError("a registered dataset needs its registry; none could be opened.")
    try:
        check_policies(request)
    except InputError as err:
        if registry is not None:
            registry.refuse(request.tool, dataset, str(err), request.params)
        raise
    release = None
    if registry is not None:
        analyst = request.charged_to
        anonymous = analyst is None and request.role is Role.ANALYST
        if anonymous and dataset is not None and registry.has_shares(dataset):
            reason = (
                f"dataset '{dataset}' is shared among named analysts: declare who you are "
                f"({ANALYST_VAR}=NAME). Nothing was charged."
            )
            registry.refuse(request.tool, dataset, reason, request.params)
            raise RoleError(reason)
        release = registry.charge(
            request.tool, dataset, request.params, request.cost, request.mode, request.claim,
            analyst,
        )  # fmt: skip
    accountant = Accountant(request.noise, budget=request.cost, rho=request.rho)
    result = _compute(registry, release, request, compute, accountant)
    if registry is None or release is None:
        return Governed(None, result)
    # the record is built after the charge too: a failure here keeps the charge and says so
    artefact = _compute(registry, release, request, lambda _: artefact_of(result), None)
    return Governed(_attach(registry, release, artefact, accountant), result)


def _compute(registry, release, request: Request, compute, accountant: Accountant | None):
    try:
        return compute(accountant)
    except BaseException as err:
        if registry is None or release is None:
            raise
        public = isinstance(err, InputError) and request.role is Role.OWNER
        note = str(err) if public else type(err).__name__
        registry.fail(release.id, note)
        if not isinstance(err, Exception):
            raise  # KeyboardInterrupt, SystemExit: the run is marked failed, then stop
        stands = _stands(release)
        if public:
            raise ComputeFailed(f"{err}{stands}") from None
        code = f"{request.error_code} " if request.error_code else ""
        if not isinstance(err, InputError):  # not a refusal: every public check came before
            raise ComputeFailed(
                f"{code}internal error after the charge: a fault in DP Explorer, not in your "
                f"request (details withheld: they could depend on the data).{stands} Fix: "
                "report it with the command line; running it again is charged again."
            ) from None
        raise ComputeFailed(
            f"{code}the computation failed after the charge (details withheld: they could "
            f"depend on the data).{stands} Fix: check the parameters; running it again is "
            "charged again."
        ) from None


def _stands(release: Release) -> str:
    if release.epsilon == 0 and release.delta == 0:
        return ""
    if release.kind is RunKind.RELEASE:
        return (
            f" Release #{release.id}: the charge of epsilon {release.epsilon:g}, delta "
            f"{release.delta:g} stands (charged before the data was read)."
        )
    what = "demo run" if release.kind is RunKind.DEMO else "unregistered run"
    return (
        f" Run #{release.id} ({what}): its epsilon {release.epsilon:g}, delta "
        f"{release.delta:g} stands as spent — the data had been read."
    )


def _attach(registry: Registry, release: Release, artefact: dict, accountant) -> Release:
    try:
        return registry.attach(release.id, artefact, accountant.mechanisms)
    except RegistryError as err:
        # best effort; if even that fails, the run is listed as stranded once this process ends
        with suppress(RegistryError):
            registry.mark_undelivered(release.id, str(err))
        raise Undelivered(
            f"release #{release.id} was computed but could not be recorded: {err}"
        ) from None


def check_fits(
    registry: Registry, dataset: Dataset, costs: Iterable[Cost], tool: str, params: dict
) -> None:
    """Refuse (recorded, nothing charged) a set of releases that cannot fit the remaining
    budget as a whole — e.g. several location methods in one click — before the first one is
    charged (each charge still re-checks atomically)."""
    costs = list(costs)
    need = Cost(sum(c.epsilon for c in costs), min(sum(c.delta for c in costs), 1 - 1e-300))
    p = dataset.policy
    short = check_budget(
        need,
        spent=Cost(*registry.spent(dataset.name)),
        total=Cost(p.epsilon_total, p.delta_total),
        subject=f"dataset '{dataset.name}'",
        owner_command=f"dpx dataset budget {dataset.name}",
    )
    if short is not None:
        reason = f"{len(costs)} release(s) together: {short}" if len(costs) > 1 else str(short)
        registry.refuse(tool, dataset.name, reason, params)
        raise BudgetExceededError(reason)
