"""Several location histograms in one click (the location page): one governed release per method.

Composition is basic: k methods at ε each cost k·ε. The whole set is checked against the
dataset's remaining budget before the first charge (refused whole and recorded if it cannot
fit); then each method goes through `govern` on its own — charged ε before its builder reads
the counts, drawing through an accountant holding that charge, recorded with its typed record
and the mechanisms that drew. A method that fails after its charge keeps its charge; the ones
charged before it stay released.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from core.errors import InputError
from core.governance.flow import Request, check_fits, govern
from core.governance.roles import Role
from core.privacy import Cost, Noise
from core.registry import Claim, Dataset, Registry, Tool
from core.spatial.grid import Grid
from core.spatial.methods import get_method
from core.spatial.record import location_artefact
from core.spatial.releases import ChargedRelease
from core.spatial.unit import POINT, Unit


def release_methods(
    registry: Registry | None,
    role: Role,
    dataset: Dataset | None,
    F: np.ndarray,
    grid: Grid,
    methods: Sequence[str],
    epsilon: float,
    noise_for: Callable[[str], Noise],
    params: dict,
    method_params: dict[str, dict] | None = None,
    unit: Unit = POINT,
) -> list[ChargedRelease]:
    """One ε-DP location histogram per method, each governed (see the module docstring).

    Privacy claim: each release is `epsilon`-DP for `unit` (one point, or each person with at
    most K points: the counts in `F` were bounded so when they were binned); the set costs
    len(methods)·`epsilon` of the dataset's budget under basic composition."""
    if not methods:
        raise InputError("choose at least one method.")
    builders = {m: get_method(m) for m in methods}  # an unknown name: refused before a charge
    method_params = method_params or {}
    cost = Cost(float(epsilon))
    noises = {m: noise_for(m) for m in methods}
    if registry is not None and dataset is not None and all(n.is_secure for n in noises.values()):
        check_fits(registry, dataset, [cost] * len(methods), Tool.LOCATION.value, params)
    built: list[ChargedRelease] = []
    for method in methods:
        noise = noises[method]
        request = Request(
            tool=Tool.LOCATION.value,
            role=role,
            dataset=dataset,
            params={**params, "method": method, "epsilon": float(epsilon)},
            cost=cost,
            claim=Claim(unit.describe(), unit.column),
            noise=noise,
        )
        extra = method_params.get(method, {})

        def compute(accountant, build=builders[method], extra=extra):
            return build(F, float(epsilon), accountant, unit=unit, **extra)

        governed = govern(
            registry, request, compute, lambda rel: location_artefact(rel, grid).to_json()
        )
        record = governed.record
        built.append(
            ChargedRelease(
                method,
                float(epsilon),
                governed.result,
                noise.label,
                None if record is None else record.id,
            )
        )
    return built
