"""The location page's release step: one release per chosen method, each charged once.

`build_step` is the ONE place this page makes a release. The widgets' values become typed
`LocationParams` (`ui.location.params`), one per method, and `prepare_all` checks each with
`core.spatial.service.prepare` (the same checks `dpx release` makes) before the points are
binned; `build_step` takes those `LocationPrepared` releases, and the governed flow
(`core.governance.location.release_methods`: one `location_request` and one `govern` per
method) charges each its prepared cost: a registered dataset's budget is charged in the release
registry (a refusal is shown and recorded, nothing is built); a demo table or an upload is
recorded as an unregistered run (a seeded run as a demo run), exactly as `dpx release` does.
Each charge records this browser session's id in its params, so a reload or a restart during
the build still finds the releases it paid for ("charged, not shown"). The map and the
downloads show exactly the releases of the kept `Build`, which keeps the typed
`LocationBuildRequest` (`ui.location.request`) it was made with.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.governance import Role
from core.governance.location import release_methods
from core.registry import Dataset, Registry
from core.spatial.evaluate import stream
from core.spatial.grid import Grid
from core.spatial.release import Release
from core.spatial.releases import ChargedRelease
from core.spatial.service import LocationParams, LocationPrepared, prepare
from ui import state
from ui.actions import queued
from ui.data import DataChoice
from ui.location.request import LocationBuildRequest
from ui.outcomes import charged, governed, open_registry, plan_text
from ui.shell import is_analyst

BUILD_KEY = "lh_result"
EVAL_KEY = "lh_evaluation"
TOOL = "location"


@dataclass(frozen=True)
class Build:
    """One finished build: the typed request it was made with and the charged releases."""

    request: LocationBuildRequest
    charged: tuple[ChargedRelease, ...]
    dataset: str | None
    recorded: str  # what the registry recorded, in words

    @property
    def fingerprint(self) -> str:
        """The request's fingerprint: a build whose fingerprint differs from the page's is stale."""
        return self.request.fingerprint()

    @property
    def grid(self) -> Grid:
        return self.request.grid

    @property
    def bbox_from_data(self) -> bool:
        return self.request.bbox_from_data

    @property
    def noise_info(self) -> dict:
        """The build's noise mode as exports state it (the seed only when seeded)."""
        return self.request.noise.describe()

    @property
    def releases(self) -> dict[str, Release]:
        return {c.method: c.release for c in self.charged}

    @property
    def seed(self) -> int | None:
        return self.request.seed


def build_step(
    choice: DataChoice,
    prepared: tuple[LocationPrepared, ...],
    request: LocationBuildRequest,
    prep,
) -> Build | None:
    """Charge, then build, one release per chosen method; keep the result for the session.

    Privacy claim: each method's release is ε-DP (ε = its prepared cost, the composition of
    the mechanisms or stage budgets `prepare` states) for its `PrivacyUnit` (one row; each row
    one person for a dataset that declares it; or each person with at most K points: the counts
    were bounded so when they were binned); it is charged that cost before its builder reads
    the counts, so k methods cost k·ε (basic composition) of the registered dataset's budget —
    the same `Cost` sets the charge and the builder's own accountant. A set that does not fit
    is refused whole (recorded, nothing built). Demo tables and uploads are recorded as
    unregistered runs, not limited.
    """
    state.drop(BUILD_KEY, EVAL_KEY)  # a refused or failed build leaves nothing stale
    registry = choice.registry if choice.dataset is not None else open_registry()
    with governed("Build", key="lh"):
        b = _build(prepared, request, prep, registry, choice)
        state.put(BUILD_KEY, b, "the location releases")
        state.mark_shown(c.charge_id for c in b.charged)
        charged(choice.dataset)
        return b
    return None


def prepare_all(
    asked: tuple[LocationParams, ...], dataset: Dataset | None
) -> tuple[LocationPrepared, ...]:
    """`core.spatial.service.prepare` for each method the page asks for (nothing read)."""
    return tuple(prepare(p, dataset) for p in asked)


def _build(
    prepared: tuple[LocationPrepared, ...],
    request: LocationBuildRequest,
    prep,
    registry: Registry | None,
    choice: DataChoice,
) -> Build:
    dataset = choice.dataset
    door = request.door(state.session_id())
    with queued(None), st.status(f"Building {len(prepared)} release(s)…", expanded=True) as status:
        built = release_methods(
            registry,
            Role.ANALYST if is_analyst() else Role.OWNER,
            dataset,
            prepared,
            prep,
            # secure unless demo mode; seeded: the method's own stream, the one a seeded
            # `dpx release --method M` draws (core.cli.location_run.release_noise)
            lambda m: stream(request.seed, 0, f"release:{m}"),
            door,
        )
        status.update(label="Releases built and charged", state="complete", expanded=False)
    return Build(
        request, tuple(built), None if dataset is None else dataset.name,
        _recorded(registry, dataset, built, request.noise.mode),
    )  # fmt: skip


def _recorded(registry: Registry | None, dataset: Dataset | None, built, mode: str) -> str:
    ids = ", ".join(f"#{c.charge_id}" for c in built if c.charge_id is not None)
    if registry is None:
        return "Not recorded: the release registry could not be opened (unregistered data)."
    if mode == "seeded":
        return f"Recorded as demo runs {ids} (seeded noise: not releases, nothing charged)."
    if dataset is None:
        return (
            f"Recorded as unregistered runs {ids} (demo table or upload: not limited across "
            "runs). Register the dataset (`dpx dataset add`) to give it a budget."
        )
    eps_left, _ = registry.remaining(dataset.name)
    total = sum(c.epsilon for c in built)
    plan = plan_text(registry, [c.charge_id for c in built])
    return (
        f"Charged to dataset **{dataset.name}**: releases {ids}, ε {built[0].epsilon:g} each, "
        f"{total:g} in total (basic composition). Remaining ε {eps_left:g} of "
        f"{dataset.policy.epsilon_total:g}." + (f" {plan}" if plan else "")
    )
