"""The location page's release step: one release per chosen method, each charged once.

`build_step` is the ONE place this page makes a release, through the governed flow
(`core.governance.location.release_methods`: one `govern` per method): a registered dataset's budget is charged in the release registry (a
refusal is shown and recorded, nothing is built); a demo table or an upload is recorded as an
unregistered run (a seeded run as a demo run), exactly as `dpx htf` does. Each charge records
this browser session's id in its params, so a reload or a restart during the build still finds
the releases it paid for ("charged, not shown"). The map and the downloads show exactly the
releases of the kept `Build`.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.governance import Role
from core.governance.location import release_methods
from core.privacy import Noise
from core.registry import Dataset, Registry
from core.spatial.evaluate import stream
from core.spatial.grid import Grid
from core.spatial.methods import htf_method_params
from core.spatial.release import Release
from core.spatial.releases import ChargedRelease
from core.spatial.unit import unit_from
from ui import state
from ui.data import DataChoice
from ui.outcomes import charged, governed, open_registry, plan_text
from ui.shell import is_analyst

BUILD_KEY = "lh_result"
EVAL_KEY = "lh_evaluation"
TOOL = "location"


@dataclass(frozen=True)
class Build:
    """One finished build: the parameters it was made with and the charged releases."""

    params_json: str
    params: dict
    charged: tuple[ChargedRelease, ...]
    grid: Grid
    bbox_from_data: bool
    noise_info: dict
    dataset: str | None
    recorded: str  # what the registry recorded, in words

    @property
    def releases(self) -> dict[str, Release]:
        return {c.method: c.release for c in self.charged}

    @property
    def seed(self) -> int | None:
        return self.noise_info.get("seed") if self.noise_info.get("mode") == "seeded" else None


def build_step(
    choice: DataChoice, params: dict, params_json: str, prep, noise: Noise
) -> Build | None:
    """Charge, then build, one release per chosen method; keep the result for the session.

    Privacy claim: each method's release is ε-DP (ε = params["epsilon"]) for the unit in
    `params["person"]` (one point, or each person with at most K points: the counts were bounded
    so when they were binned); it is charged ε before its builder reads the counts, so k methods
    cost k·ε (basic composition) of the registered dataset's budget — the same `Cost` sets the
    charge and the builder's own accountant. A set that does not fit is refused whole (recorded,
    nothing built). Demo tables and uploads are recorded as unregistered runs, not limited.
    """
    state.drop(BUILD_KEY, EVAL_KEY)  # a refused or failed build leaves nothing stale
    registry = choice.registry if choice.dataset is not None else open_registry()
    with governed("Build", key="lh"):
        b = _build(params, params_json, prep, noise, registry, choice.dataset)
        state.put(BUILD_KEY, b, "the location releases")
        state.mark_shown(c.charge_id for c in b.charged)
        charged(choice.dataset)
        return b
    return None


def _build(params, params_json, prep, noise: Noise, registry: Registry | None, dataset) -> Build:
    methods, eps = params["methods"], float(params["epsilon"])
    app = {**params, "via": "app", "session": state.session_id()}
    with st.status(f"Building {len(methods)} release(s)…", expanded=True) as status:
        built = release_methods(
            registry,
            Role.ANALYST if is_analyst() else Role.OWNER,
            dataset,
            prep.F,
            prep.grid,
            methods,
            eps,
            # secure unless demo mode; seeded: the method's own stream, the one a seeded
            # `dpx release --method M` draws (core.cli.location_run.release_noise)
            lambda m: stream(noise.seed, 0, f"release:{m}"),
            app,
            method_params=htf_method_params(methods, params["htf"]),
            unit=unit_of(params),
        )
        status.update(label="Releases built and charged", state="complete", expanded=False)
    return Build(
        params_json, params, tuple(built), prep.grid, prep.bbox_from_data, noise.describe(),
        None if dataset is None else dataset.name,
        _recorded(registry, dataset, built, noise.mode),
    )  # fmt: skip


def unit_of(params: dict):
    """The privacy unit a build's parameters name (`params["person"]`: [column, K] or absent)."""
    column, k = params.get("person") or (None, None)
    return unit_from(column, k)


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
