"""PP balancing: publish through the release registry (shared by the owner and analyst views).

A registered dataset's publication is a release of tool "pp" — a (ρ1, ρ2) publication, not
ε-DP, so no ε is charged — and a demo table or an upload is recorded as an unregistered run
(seeded runs as demo runs), exactly as `dpx balance` does.
"""

from __future__ import annotations

from core.registry import Registry, Release
from core.registry.release_flow import charged_release

PP_TOOL = "pp"


def publish_recorded(registry: Registry | None, dataset_name: str | None, rho, params, run):
    """Publish through the registry: charge (nothing: PP is not ε-DP) and record, then run.

    Privacy claim: the publication is (ρ1, ρ2)-private per record (PP balancing, spec pp.md),
    not ε-DP; it is recorded as such, with no ε or δ charged. Without a registry (it could not
    be opened) an unregistered publication is made unrecorded, as `dpx balance` does."""
    if registry is None:
        return None, run()
    return charged_release(
        registry,
        PP_TOOL,
        dataset_name,
        [],
        params["noise"],
        params,
        compute=run,
        artefact_of=lambda pub: {
            "published_metadata": pub.metadata,
            "rows": len(pub.table),
            "columns": [str(c) for c in pub.table.columns],
        },
        privacy={
            "model": "(rho1, rho2)-privacy (PP balancing); not epsilon-DP",
            "rho1": rho[0],
            "rho2": rho[1],
            "unit": "one record",
        },
    )


def recorded_text(release: Release | None) -> str:
    if release is None:
        return "Not recorded: the registry could not be opened."
    if release.dataset is not None and release.mode != "seeded":
        return (
            f"Recorded as release #{release.id} of dataset '{release.dataset}': a (ρ1, ρ2) "
            "publication, no ε charged."
        )
    if release.mode == "seeded":
        return f"Recorded as demo run #{release.id} (seeded: not a release)."
    return f"Recorded as unregistered run #{release.id} (not limited across runs)."
