"""The one governance request of a location histogram, built from its `LocationPrepared`
(issue 28), and the page's several methods in one click.

`location_request` is the only place a location `Request` is built: `dpx htf` / `dpx release`
(`core.cli.location_run`) and the location page (`ui.location.release`, through
`release_methods`) both call it. The cost is the prepared release's (composed from the
mechanisms or stage budgets it states before drawing), the claim's unit is its `PrivacyUnit`
(in that unit's own words), and the recorded parameters are its typed `LocationParams`.

`release_methods`: composition is basic, k methods at ε each cost k·ε. The whole set is
checked against the dataset's remaining budget before the first charge (refused whole and
recorded if it cannot fit); then each method goes through `govern` on its own — charged its
cost before its builder reads the counts, drawing through an accountant holding that charge,
recorded with its typed record and the mechanisms that drew. A method that fails after its
charge keeps its charge; the ones charged before it stay released.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core.errors import InputError
from core.governance.flow import Check, Request, check_fits, govern
from core.governance.origin import Origin, Via
from core.governance.roles import Role
from core.privacy import Noise
from core.registry import Claim, Dataset, Registry, Tool
from core.spatial.pipeline import Prepared as Binned
from core.spatial.record import location_artefact
from core.spatial.releases import ChargedRelease
from core.spatial.service import LocationPrepared, check_binned, run


def location_request(
    prepared: LocationPrepared,
    *,
    role: Role,
    dataset: Dataset | None,
    noise: Noise,
    door: Origin | None = None,
    extra_checks: tuple[Check, ...] = (),
) -> Request:
    """The governed request of one location histogram.

    Privacy claim: (ε, δ) = `prepared.cost` — the composition of the mechanisms (or per-stage
    budgets) `prepared` states before drawing — at the level of `prepared.unit`. `door` adds
    what the front door records beside the parameters (e.g. the app's session id); a demo box
    derived from the data is refused (recorded, nothing charged) unless the noise is seeded."""

    def demo_box_needs_seeded_noise() -> None:
        if prepared.params.bbox_from_data and noise.is_secure:
            raise InputError(
                "a bounding box derived from the data is for seeded demo runs only. Fix: pass "
                "--bbox MINLON,MINLAT,MAXLON,MAXLAT or --region NAME."
            )

    return Request(
        tool=Tool.LOCATION.value,
        role=role,
        dataset=dataset,
        params=(door or Origin(Via.CLI)).around(prepared.params.to_json()),
        cost=prepared.cost,
        claim=Claim.of(prepared.unit),
        noise=noise,
        extra_checks=(demo_box_needs_seeded_noise, *extra_checks),
    )


def release_methods(
    registry: Registry | None,
    role: Role,
    dataset: Dataset | None,
    prepared: Sequence[LocationPrepared],
    data: Binned,
    noise_for: Callable[[str], Noise],
    door: Origin | None = None,
) -> list[ChargedRelease]:
    """One location histogram per prepared method, each governed (see the module docstring).

    Privacy claim: each release is ε-DP (ε = its `cost`) for its `unit` (the counts in
    `data.F` were bounded for it when they were binned, checked before any charge); the set
    costs the sum of their costs of the dataset's budget under basic composition."""
    if not prepared:
        raise InputError("choose at least one method.")
    for p in prepared:  # the counts fit every release: refused before any charge otherwise
        check_binned(p, data)
    noises = {p.method: noise_for(p.method) for p in prepared}
    requests = [
        location_request(p, role=role, dataset=dataset, noise=noises[p.method], door=door)
        for p in prepared
    ]
    if registry is not None and dataset is not None and all(n.is_secure for n in noises.values()):
        check_fits(
            registry, dataset, [r.cost for r in requests], Tool.LOCATION.value, requests[0].params
        )
    built: list[ChargedRelease] = []
    grid = data.grid
    for p, request in zip(prepared, requests, strict=True):

        def compute(accountant, p=p):
            return run(p, data, accountant)

        governed = govern(
            registry, request, compute, lambda rel: location_artefact(rel, grid).to_json()
        )
        record = governed.record
        built.append(
            ChargedRelease(
                p.method,
                p.params.epsilon,  # the ε it was built with (its cost: that ε, composed)
                governed.result,
                request.noise.label,
                None if record is None else record.id,
            )
        )
    return built
