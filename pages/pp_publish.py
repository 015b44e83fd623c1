"""PP balancing: publish through the release registry (shared by the owner and analyst views).

A registered dataset's publication is a release of tool "pp": it charges the ε of its partition
plan (discrete Laplace on the value counts, `core.balancing.release`) and claims (ρ1, ρ2) per
record; a demo table or an upload is recorded as an unregistered run (seeded runs as demo
runs), exactly as `dpx balance --perturb` does.
"""

from __future__ import annotations

from core.balancing.release import ReleaseSettings
from core.privacy import from_json
from core.registry import Registry, Release
from core.registry.governed import compute_after_charge

PP_TOOL = "pp"


def publish_recorded(
    registry: Registry | None,
    dataset_name: str | None,
    settings: ReleaseSettings,
    params,
    run,
):
    """Publish through the registry: charge the plan's ε and record, then run.

    Privacy claim: ((ρ1, ρ2) per record) + (ε for the partition plan, unit: one record's SA
    value). Without a registry (it could not be opened) an unregistered publication is made
    unrecorded, as `dpx balance` does."""
    if registry is None:
        return None, run()
    release = registry.charge(
        PP_TOOL,
        dataset_name,
        params,
        settings.charged_mechanisms,  # the objects that draw the plan's noise
        params["noise"],
        {
            "model": "(rho1, rho2)-privacy per record (PP balancing) + (epsilon, delta)-DP "
            "partition plan",
            "rho1": str(settings.rho1),
            "rho2": str(settings.rho2),
            "plan_epsilon": settings.plan_epsilon,
            "plan_delta": settings.cost.delta,
            "unit": "one record",
        },
    )
    pub = compute_after_charge(registry, release, run)
    drew = [from_json(row) for row in pub.metadata["privacy"]["mechanisms"]]
    artefact = {
        "published_metadata": pub.metadata,
        "columns": [str(c) for c in pub.table.columns],
    }
    return registry.attach(release.id, artefact, drew), pub


def recorded_text(release: Release | None) -> str:
    if release is None:
        return "Not recorded: the registry could not be opened."
    if release.dataset is not None and release.mode != "seeded":
        return (
            f"Recorded as release #{release.id} of dataset '{release.dataset}': a (ρ1, ρ2) "
            f"publication whose partition plan charged ε = {release.epsilon:g}."
        )
    if release.mode == "seeded":
        return f"Recorded as demo run #{release.id} (seeded: not a release)."
    return f"Recorded as unregistered run #{release.id} (not limited across runs)."
