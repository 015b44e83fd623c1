"""The two planning helpers that read data are releases of their own, through the governed flow.

A pilot (`core.planning.pilot`) and a bounds histogram (`core.planning.bounds`) are charged to
the dataset before any data is read, draw only through the accountant that holds the charge,
and leave their released values in the registry as artefacts (tools "pilot" and "bounds"), so a
plan that rests on them can be read back — by an analyst too — from the record alone.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from core.errors import InputError
from core.governance.flow import Governed, Request, govern
from core.governance.origin import Origin
from core.governance.roles import Role
from core.planning.bounds import TOOL as BOUNDS_TOOL
from core.planning.bounds import BoundsProposal, measure_bounds
from core.planning.pilot import TOOL as PILOT_TOOL
from core.planning.pilot import Pilot, measure_pilot
from core.privacy import Cost, Noise
from core.registry import Claim, Dataset, Registry, Release, RunKind
from core.spatial.service import privacy_unit_of
from core.spatial.unit import Unit


def governed_pilot(
    registry: Registry | None,
    role: Role,
    dataset: Dataset | None,
    noise: Noise,
    door: Origin,
    epsilon: float,
    unit: Unit,
    load: Callable[[Noise], tuple[np.ndarray, tuple | None]],
    extra_checks: tuple = (),
) -> Governed[Pilot]:
    """Charge ε to the dataset, then read the points (`load(noise)` -> (F, bbox)) and draw the
    pilot. Privacy claim: `measure_pilot`'s, for `unit`; the registry records the mechanisms
    that drew and the pilot's leaves and noisy counts."""
    request = Request(
        tool=PILOT_TOOL,
        role=role,
        dataset=dataset,
        params=door.around({"pilot_epsilon": epsilon}),
        cost=Cost(float(epsilon)),
        claim=Claim.of(privacy_unit_of(unit, dataset)),  # the unit's words (core.privacy)
        noise=noise,
        extra_checks=tuple(extra_checks),
    )

    def compute(accountant):
        F, bbox = load(accountant.noise)
        return measure_pilot(F, float(epsilon), accountant, unit, bbox)

    governed = govern(registry, request, compute, lambda p: p.to_json())
    pilot = governed.result
    if governed.record is not None and governed.record.artefact is not None:
        pilot = Pilot.from_json(governed.record.artefact, governed.record.id)
    return Governed(governed.record, pilot)


def governed_bounds(
    registry: Registry | None,
    role: Role,
    dataset: Dataset | None,
    noise: Noise,
    door: Origin,
    epsilon: float,
    claim: Claim,
    load: Callable[[], np.ndarray],
    *,
    column: str,
    statistic: str,
    scale: float,
    clip_share: float,
    extra_checks: tuple = (),
) -> Governed[BoundsProposal]:
    """Charge ε, then read one value per unit (`load()`) and draw the bounds histogram.
    Privacy claim: `measure_bounds`'s (add/remove one unit, sensitivity 1)."""
    request = Request(
        tool=BOUNDS_TOOL,
        role=role,
        dataset=dataset,
        params=door.around(
            {"epsilon": epsilon, "column": column, "statistic": statistic, "clip_share": clip_share}
        ),
        cost=Cost(float(epsilon)),
        claim=claim,
        noise=noise,
        extra_checks=tuple(extra_checks),
    )

    def compute(accountant):
        return measure_bounds(
            load(), float(epsilon), accountant, column=column, statistic=statistic,
            scale=scale, clip_share=clip_share,
        )  # fmt: skip

    return govern(registry, request, compute, lambda b: b.to_json())


def recorded_pilot(registry: Registry, release_id: int, dataset: str | None) -> Pilot:
    """A pilot read back from its registry record (what an analyst, a page or a later plan
    uses instead of paying for a new one). Refused unless it is a delivered pilot of `dataset`."""
    record: Release = registry.release(release_id)
    if record.tool == PILOT_TOOL and record.artefact_note:
        raise InputError(
            f"pilot #{release_id}'s values are {record.artefact_note}. Fix: draw a new pilot "
            "(--pilot-epsilon), or keep demo artefacts with DPX_KEEP_DEMO_ARTEFACTS=1."
        )
    if record.tool != PILOT_TOOL or not record.artefact:
        raise InputError(
            f"release #{release_id} is not a delivered pilot (tool '{record.tool}'). Fix: "
            "--pilot-release ID of a 'pilot' release (see `dpx dataset show NAME`)."
        )
    if dataset is not None and record.dataset != dataset:
        raise InputError(
            f"pilot #{release_id} belongs to dataset '{record.dataset}', not '{dataset}'."
        )
    if record.kind is RunKind.DEMO and dataset is not None:
        raise InputError(f"pilot #{release_id} is a seeded demo run, not a release.")
    return Pilot.from_json(record.artefact, record.id)
