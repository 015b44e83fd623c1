"""The one governance request of a PP publication, built from its `PPPrepared` (issue 28).

`dpx balance --perturb` and the PP page both call `pp_request`: the cost is the prepared
publication's (composed from the mechanisms that will draw), the claim is its (ρ1, ρ2) per
record with its `PrivacyUnit`, and the checks before the charge are the same on both doors
(`PPPrepared.missing_check`, the rule of `core.balancing.precharge`; the header and policy
checks ran in `prepare`). Nothing else assembles a PP request.
"""

from __future__ import annotations

from collections.abc import Callable

from core.balancing.service import PPParams, PPPrepared, PPSource, prepare
from core.errors import InputError
from core.governance.flow import Request
from core.governance.origin import Origin, Via
from core.governance.roles import Role
from core.privacy import Noise
from core.registry import Dataset, Registry, Tool


def pp_request(
    prepared: PPPrepared,
    *,
    role: Role,
    dataset: Dataset | None,
    noise: Noise,
    door: Origin | None = None,
    extra_checks: tuple[Callable[[], None], ...] = (),
) -> Request:
    """The governed request of one PP publication.

    Privacy claim: (ρ1, ρ2)-privacy per record (`prepared.rho`) + (ε, δ) = `prepared.cost`,
    the composition of `prepared.mechanisms` (discrete Laplace on the value counts; without
    declared categories the noisy threshold's δ), for the partition plan, protecting
    `prepared.unit`. `door`: how the request came (`core.governance.origin.Origin`), recorded
    beside `prepared.params`, which it may not override."""
    if dataset is not prepared.source.dataset and dataset != prepared.source.dataset:
        raise ValueError("the request's dataset is not the one the publication was prepared on")
    recorded = (door or Origin(Via.CLI)).around(prepared.params.to_json())
    recorded["columns"] = list(prepared.columns)  # published: the SA and the others, in order
    recorded["categories_from"] = prepared.categories_from
    return Request(
        tool=Tool.PP.value,
        role=role,
        dataset=dataset,
        params=recorded,
        cost=prepared.cost,
        claim=prepared.claim,
        noise=noise,
        rho=prepared.rho,
        extra_checks=(prepared.missing_check(role is Role.ANALYST), *extra_checks),
    )


def prepared_or_refused(
    registry: Registry | None,
    params: PPParams,
    source: PPSource,
    door: Origin | None = None,
) -> PPPrepared:
    """`prepare(params, source)`; on a registered dataset a refusal (nothing read, nothing
    charged) is recorded like any other refusal of the governed flow, on both doors."""
    try:
        return prepare(params, source)
    except InputError as err:
        if registry is not None and source.dataset is not None:
            recorded = (door or Origin(Via.CLI)).around(params.to_json())
            registry.refuse(Tool.PP.value, source.dataset.name, str(err), recorded)
        raise
