"""One typed location request for both front doors (issue 28, items 1, 4, 5).

* parity: the page's widget values (`ui.location.params`) and `dpx htf` / `dpx release`'s argv
  (`core.cli.location_run.location_params`) give equal `LocationPrepared` objects — params,
  unit, cost, mechanisms, stage budgets — for a matrix of methods, person columns and
  registered datasets (one declaring each row a person, one declaring a person column);
* the charge of every method equals the composition of what its accountant recorded (seeded,
  every draw instrumented), stage by stage;
* a failure after the charge is reported as failed and the charge stands, on both doors;
* checks that need no data (unknown method, bad box, bad K, a person column on a dataset whose
  rows are people, Spark with a person column) refuse before any charge.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import build_parser, main
from core.cli.location_run import ROW_IS_PERSON_GUARANTEE, location_params
from core.errors import InputError
from core.governance import ComputeFailed, Role, govern
from core.governance.location import location_request, release_methods
from core.governance.origin import Origin
from core.privacy import DRAWING, Cost, Noise, PrivacyUnit, UnitKind, same_mechanism
from core.registry import Registry, RunKind, Status
from core.spatial.grid import Grid
from core.spatial.methods import Door, location_method_names
from core.spatial.pipeline import Prepared as Binned
from core.spatial.record import location_artefact
from core.spatial.release import Release
from core.spatial.service import (
    STAGED,
    LocationParams,
    LocationPrepared,
    location_params_from_json,
    prepare,
)
from core.spatial.unit import POINT, PersonUnit
from ui.location.params import Columns, all_location_params
from ui.location.release import prepare_all

BBOX = (-118.5, 33.7, -117.9, 34.3)
BBOX_ARG = "--bbox=-118.5,33.7,-117.9,34.3"
EPS = 0.5
GRID = 64
# the page's sidebar at its defaults (ui/location/inputs.py: sidebar_parameters)
STATES_MECHANISMS = {"identity", "uniform", "privelet", "ug", "ag", "privtree", "dawa"}
SIDEBAR = {
    "eps_height": 1e-4, "eps_prt_level": 1e-3, "T": 3, "stop_count": 100.0, "stop_cells": 5,
    "height": None, "combine_pruned": False, "consistency": False, "cap_height": False,
}  # fmt: skip


@pytest.fixture
def points(tmp_path):
    rng = np.random.default_rng(8)
    n = 600
    frame = pd.DataFrame(
        {
            "user": rng.integers(0, 80, n),
            "lat": 34.0 + rng.normal(0, 0.05, n),
            "lon": -118.2 + rng.normal(0, 0.05, n),
        }
    )
    path = tmp_path / "visits.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def registry(registry_dir, points, capsys) -> Registry:
    """'rows': each row one person (--row-is-unit); 'people': person column 'user'."""
    for argv in (
        ["dataset", "add", "rows", "--table", f"t={points}", "--row-is-unit", "--epsilon", "5"],
        ["dataset", "add", "people", "--table", f"t={points}", "--uid", "user", "--epsilon", "5"],
    ):
        assert main(argv) == 0
    capsys.readouterr()
    return Registry(registry_dir)


# -- the two edges ---------------------------------------------------------------------------
def cli_prepared(argv: list[str], registry: Registry | None) -> LocationPrepared:
    """What `dpx ARGV` prepares: argv -> LocationParams (the CLI's edge) -> prepare."""
    args = build_parser(argv).parse_args(argv)
    method = "htf" if args.command == "htf" else args.method
    dataset = registry.dataset(args.dataset) if args.dataset else None
    return prepare(location_params(args, method), dataset)


def page_prepared(method, person, k, dataset, registry) -> LocationPrepared:
    """What the page's Build prepares from its widgets (ui.location.params -> prepare_all)."""
    columns = Columns("lat", "lon", GRID, person, k)
    d = registry.dataset(dataset) if dataset else None
    (prepared,) = prepare_all(all_location_params(EPS, SIDEBAR, [method], columns, BBOX, False), d)
    return prepared


def argv_for(command, method, person, k, dataset, points) -> list[str]:
    argv = [command] + (["--method", method] if command == "release" else [])
    argv += ["--dataset", dataset] if dataset else [str(points)]
    argv += ["--lat", "lat", "--lon", "lon", BBOX_ARG, "--grid", str(GRID), "--epsilon", str(EPS)]
    if person and dataset != "people":  # a registered person column needs no --uid
        argv += ["--uid", person]
    if k:
        argv += ["--max-points-per-person", str(k)]
    return argv


CASES = [  # (command, method, person column, K, registered dataset, the unit's kind)
    ("release", "ug", None, None, None, UnitKind.RECORD),
    ("release", "privelet", None, None, None, UnitKind.RECORD),
    ("release", "htf", None, None, None, UnitKind.RECORD),
    ("htf", "htf", None, None, None, UnitKind.RECORD),
    ("release", "auto", None, None, None, UnitKind.RECORD),
    ("release", "htf+", "user", 3, None, UnitKind.PERSON),
    ("release", "ug", "user", 3, None, UnitKind.PERSON),
    ("release", "privelet", "user", 4, None, UnitKind.PERSON),
    ("release", "auto", "user", 5, None, UnitKind.PERSON),
    ("release", "privelet", None, None, "rows", UnitKind.ROW_IS_PERSON),
    ("release", "htf", None, None, "rows", UnitKind.ROW_IS_PERSON),
    ("release", "auto", None, None, "rows", UnitKind.ROW_IS_PERSON),
    ("release", "ug", "user", 4, "people", UnitKind.PERSON),  # the page's default person column
    ("htf", "htf", "user", 2, "people", UnitKind.PERSON),
]


@pytest.mark.parametrize(("command", "method", "person", "k", "dataset", "kind"), CASES)
def test_the_page_and_the_cli_prepare_the_same_release(
    command, method, person, k, dataset, kind, points, registry
):
    page = page_prepared(method, person, k, dataset, registry)
    cli = cli_prepared(argv_for(command, method, person, k, dataset, points), registry)
    assert page == cli  # params, method row, unit, grid, mechanisms, stage budgets
    assert page.params == cli.params and page.unit == cli.unit and page.cost == cli.cost
    assert page.mechanisms == cli.mechanisms and page.budgets == cli.budgets
    assert page.unit.kind is kind and page.cost == Cost(EPS)
    recorded = json.loads(json.dumps(page.params.to_json()))  # as the registry keeps it
    assert location_params_from_json(recorded) == page.params
    if kind is UnitKind.PERSON:
        assert page.unit == PrivacyUnit.person("user", k)
        assert page.spatial_unit == PersonUnit("user", k)
    else:
        assert page.spatial_unit == POINT
    if kind is UnitKind.ROW_IS_PERSON:
        assert page.unit.words() == "one row (each row is one person)"
    assert (
        location_request(page, role=Role.OWNER, dataset=None, noise=Noise.secure()).claim
        == location_request(cli, role=Role.OWNER, dataset=None, noise=Noise.secure()).claim
    )


def test_every_release_method_states_its_budget():
    """Every method the doors offer has stage budgets in the service (a new row must add its
    own), and they compose to ε."""
    assert set(location_method_names(Door.RELEASE)) <= STAGED
    for name in location_method_names(Door.RELEASE):
        p = prepare(LocationParams(name, 0.7, BBOX, rows=32))
        assert sum(b.epsilon for b in p.budgets) == pytest.approx(0.7, rel=1e-12)
        assert p.cost.epsilon == pytest.approx(0.7, rel=1e-12)


# -- the charge is what drew ------------------------------------------------------------------
class Draws:
    """Records the mechanism under way at every sampler call."""

    def __init__(self, monkeypatch):
        self.mechanisms: list = []
        for name in ("laplace", "discrete_laplace", "lattice_laplace", "uniform"):
            original = getattr(Noise, name)

            def patched(noise, *args, _original=original, **kwargs):
                self.mechanisms.append(DRAWING.get())
                return _original(noise, *args, **kwargs)

            monkeypatch.setattr(Noise, name, patched)


def counts(unit=POINT) -> Binned:
    rng = np.random.default_rng(21)
    F = rng.poisson(0.4, size=(GRID, GRID))
    F[10:22, 30:50] += rng.poisson(20, size=(12, 20))
    F = F.astype(np.int64)
    return Binned(F, Grid(GRID, GRID, BBOX), int(F.sum()), 0, False, "lat", "lon", unit)


def unconsumed(rel: Release) -> list:
    """Mechanisms the build planned (in-place replacement) that neither drew nor were replaced
    by one that drew: HTF's split-search levels below its last split."""
    consumed = {m.label for m in rel.mechanisms} | {
        label for m in rel.mechanisms for label in m.in_place_of
    }
    return [m for m in rel.planned if m.label not in consumed]


@pytest.mark.parametrize("name", location_method_names(Door.RELEASE))
@pytest.mark.parametrize("k", [None, 3])
def test_the_charge_is_the_composition_of_what_the_accountant_recorded(
    name, k, registry, monkeypatch
):
    person = "user" if k else None
    prepared = prepare(LocationParams(name, EPS, BBOX, rows=GRID, person=person, max_points=k))
    request = location_request(
        prepared, role=Role.OWNER, dataset=None, noise=Noise.seeded(17), door=Origin.cli()
    )
    draws = Draws(monkeypatch)
    seen = {}

    def compute(accountant):
        from core.spatial.service import run

        rel = run(prepared, counts(prepared.spatial_unit), accountant)
        seen["accountant"] = accountant
        return rel

    grid = Grid(GRID, GRID, BBOX)
    governed = govern(registry, request, compute, lambda r: location_artefact(r, grid).to_json())
    rel, record, accountant = governed.result, governed.record, seen["accountant"]
    # every draw inside a mechanism the accountant recorded; it recorded exactly those
    assert all(m is not None for m in draws.mechanisms)
    drew = list({id(m): m for m in draws.mechanisms}.values())
    assert [id(m) for m in drew] == [id(m) for m in accountant.mechanisms]
    assert rel.mechanisms == accountant.mechanisms
    # the charge: the prepared cost, and the composition of the recorded mechanisms (HTF: plus
    # the split levels it planned but never reached, and only those)
    assert record.epsilon == prepared.cost.epsilon == EPS and record.delta == 0
    left = unconsumed(rel)
    assert all("split search" in m.label for m in left)
    total = accountant.spent.epsilon + sum(m.cost.epsilon for m in left)
    assert total == pytest.approx(record.epsilon, rel=1e-12)
    assert len(record.mechanisms) == len(accountant.mechanisms)
    pairs = zip(record.mechanisms, accountant.mechanisms, strict=True)
    assert all(same_mechanism(r, m) for r, m in pairs)
    # stage by stage: each stated stage is the part of the release's ε breakdown it names
    named = set()
    for stage in prepared.budgets:
        if stage.parts is not None:
            named |= set(stage.parts)
            got = sum(rel.epsilon.get(p, 0.0) for p in stage.parts)
            assert got == pytest.approx(stage.epsilon, rel=1e-9, abs=1e-15), stage
    for stage in prepared.budgets:
        if stage.parts is None:
            rest = sum(v for p, v in rel.epsilon.items() if p != "total" and p not in named)
            assert rest == pytest.approx(stage.epsilon, rel=1e-9), stage
    # methods that state their mechanisms before drawing: exactly the objects that drew
    assert bool(prepared.mechanisms) == (name in STATES_MECHANISMS)
    if prepared.mechanisms:
        assert prepared.mechanisms == accountant.mechanisms
        assert prepared.cost == accountant.spent


# -- failures after the charge, refusals before it ----------------------------------------------
def test_a_cli_failure_after_the_charge_is_reported_failed_and_the_charge_stands(
    registry, capsys, monkeypatch
):
    import core.cli.location_run as location_run

    real_run = location_run.run

    def failing(prepared, data, accountant):
        real_run(prepared, data, accountant)  # draws everything, then fails
        raise RuntimeError("private detail 34.0123")

    monkeypatch.setattr(location_run, "run", failing)
    argv = ["release", "--dataset", "rows", "--method", "ug", BBOX_ARG, "--grid", "32",
            "--epsilon", "0.5", "--lat", "lat", "--lon", "lon"]  # fmt: skip
    code = main(argv)
    err = capsys.readouterr().err
    assert code != 0 and "34.0123" not in err
    assert "after the charge" in err and "stands" in err
    (record,) = registry.releases("rows")
    assert record.status is Status.FAILED and record.epsilon == 0.5
    assert registry.spent("rows")[0] == pytest.approx(0.5)


def test_a_page_failure_after_the_charge_is_reported_failed_and_the_charge_stands(
    registry, monkeypatch
):
    import core.governance.location as location

    def failing(prepared, data, accountant):
        raise RuntimeError("boom")

    monkeypatch.setattr(location, "run", failing)
    d = registry.dataset("rows")
    prepared = prepare_all(
        all_location_params(EPS, SIDEBAR, ["privelet", "ug"], Columns("lat", "lon", GRID), BBOX,
                            False), d,
    )  # fmt: skip
    with pytest.raises(ComputeFailed, match="after the charge.*stands"):
        release_methods(registry, Role.OWNER, d, prepared, counts(), lambda m: Noise.secure())
    (record,) = registry.releases("rows")  # the first charge stands; nothing after it ran
    assert record.status is Status.FAILED and record.params["method"] == "privelet"
    assert registry.spent("rows")[0] == pytest.approx(EPS)


def nothing_charged(registry: Registry) -> None:
    for name in ("rows", "people"):
        assert registry.spent(name) == (0.0, 0.0)
        assert [r for r in registry.releases(name) if r.kind is RunKind.RELEASE] == []


@pytest.mark.parametrize(
    ("method", "bbox", "person", "k", "dataset", "message"),
    [
        ("nope", BBOX, None, None, "rows", "unknown method 'nope'"),
        ("ug", (10.0, 40.0, 10.0, 41.0), None, None, "rows", "bounding box"),
        ("ug", (10.0, 41.0, 11.0, 40.0), None, None, "rows", "bounding box"),
        ("ug", BBOX, "user", 0, "people", "whole number >= 1"),
        ("ug", BBOX, "user", None, "people", "max-points-per-person K"),
        ("ug", BBOX, "other", 3, "people", "differs from dataset"),
        ("htf", BBOX, "user", 3, "rows", "declares each row one person"),
    ],
)
def test_the_pages_checks_come_before_any_charge(
    method, bbox, person, k, dataset, message, registry
):
    d = registry.dataset(dataset)
    columns = Columns("lat", "lon", GRID, person, k)
    with pytest.raises(InputError, match=message):
        prepared = prepare_all(all_location_params(EPS, SIDEBAR, [method], columns, bbox, False), d)
        release_methods(registry, Role.OWNER, d, prepared, counts(), lambda m: Noise.secure())
    nothing_charged(registry)


def test_counts_binned_for_another_unit_are_refused_before_the_charge(registry):
    d = registry.dataset("people")
    columns = Columns("lat", "lon", GRID, "user", 3)
    prepared = prepare_all(all_location_params(EPS, SIDEBAR, ["ug"], columns, BBOX, False), d)
    with pytest.raises(InputError, match="another unit"):
        release_methods(registry, Role.OWNER, d, prepared, counts(POINT), lambda m: Noise.secure())
    nothing_charged(registry)


@pytest.mark.parametrize(
    "extra",
    [
        ["--dataset", "rows", "--uid", "user", "--max-points-per-person", "3"],
        ["--dataset", "people", "--max-points-per-person", "3", "--engine", "spark"],
    ],
)
def test_the_clis_checks_come_before_any_charge(extra, registry, capsys):
    argv = ["release", "--method", "ug", BBOX_ARG, "--grid", "32", "--epsilon", "0.5",
            "--lat", "lat", "--lon", "lon", *extra]  # fmt: skip
    assert main(argv) != 0
    capsys.readouterr()
    nothing_charged(registry)


def test_a_box_from_the_data_needs_seeded_noise(registry):
    """The demo box is refused (recorded, nothing charged) on a secure run."""
    prepared = prepare(LocationParams("ug", EPS, None, rows=GRID, bbox_from_data=True))
    request = location_request(prepared, role=Role.OWNER, dataset=None, noise=Noise.secure())
    with pytest.raises(InputError, match="seeded demo runs only"):
        govern(registry, request, lambda a: pytest.fail("computed"), lambda r: {})
    assert registry.releases() == [] and len(registry.refusals()) == 1


def test_a_row_is_person_dataset_is_described_as_such(registry, capsys):
    argv = ["release", "--dataset", "rows", "--method", "uniform", BBOX_ARG, "--grid", "32",
            "--epsilon", "0.5", "--lat", "lat", "--lon", "lon", "--json"]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    (record,) = registry.releases("rows")
    assert record.claim.unit == "one row (each row is one person)"
    assert out["privacy_unit"] == ROW_IS_PERSON_GUARANTEE
    assert out["claim_unit"]["kind"] == "row"
    assert record.epsilon == 0.5 and record.params["method"] == "uniform"


def test_releases_built_together_evaluate_together(registry):
    """At ε 1.51 UG's stated mechanisms compose to 1.5100000000000002 (float sum), HTF's to
    1.51: the releases still carry the ε they were built with, so evaluation takes them."""
    from core.spatial.releases import evaluate

    columns = Columns("lat", "lon", GRID)
    prepared = prepare_all(all_location_params(1.51, SIDEBAR, ["ug", "htf"], columns, BBOX,
                                               False), None)  # fmt: skip
    assert prepared[0].cost.epsilon == pytest.approx(1.51, rel=1e-12)
    data = counts()
    built = release_methods(None, Role.OWNER, None, prepared, data, lambda m: Noise.seeded(4))
    assert [b.epsilon for b in built] == [1.51, 1.51]
    ev = evaluate(built, data.F, n_queries=20, reps=1, seed=3)
    assert set(ev.released_mre) == {"ug", "htf"}


def test_a_pilot_on_a_row_is_person_dataset_claims_that_unit(registry, capsys):
    """The planners' pilot (core.governance.planning) takes its claim's words from PrivacyUnit
    too: a dataset registered --row-is-unit is "one row (each row is one person)"."""
    argv = ["plan", "release", "--dataset", "rows", BBOX_ARG, "--grid", "64", "--lat", "lat",
            "--lon", "lon", "--target-mre", "0.3", "--pilot-epsilon", "0.1", "--json"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    (pilot,) = registry.releases("rows")
    assert pilot.tool == "pilot" and pilot.claim.unit == "one row (each row is one person)"


def test_the_pages_demo_box_from_the_data_builds_on_seeded_noise_only(registry):
    """The page's "derive the bbox from the data" (seeded demo): no box is a parameter, the
    CLI's `--seed` without `--bbox` prepares the same; secure noise is refused, nothing run."""
    columns = Columns("lat", "lon", GRID)
    world = (-180.0, -90.0, 180.0, 90.0)  # what the page's widget hands over in that case
    (page,) = prepare_all(all_location_params(EPS, SIDEBAR, ["ug"], columns, world, True), None)
    argv = ["release", "x.csv", "--method", "ug", "--lat", "lat", "--lon", "lon", "--grid",
            str(GRID), "--epsilon", str(EPS), "--seed", "3"]  # fmt: skip
    cli = prepare(location_params(build_parser(argv).parse_args(argv), "ug"))
    assert page == cli and page.grid is None and page.params.bbox_from_data
    data = counts()
    demo = Binned(data.F, data.grid, data.n_used, 0, True, "lat", "lon")
    (built,) = release_methods(registry, Role.OWNER, None, [page], demo, lambda m: Noise.seeded(2))
    assert registry.release(built.charge_id).kind is RunKind.DEMO
    with pytest.raises(InputError, match="seeded demo runs only"):
        release_methods(registry, Role.OWNER, None, [page], demo, lambda m: Noise.secure())
    assert len(registry.releases()) == 1 and len(registry.refusals()) == 1


def test_dawa_on_one_cell_states_no_partition():
    """One grid cell has no Hilbert runs to split: DAWA spends all of ε on the count, and the
    prepared stages say so (a partition stage there would misstate what draws)."""
    from core.privacy import Accountant
    from core.spatial.service import run

    prepared = prepare(LocationParams("dawa", EPS, BBOX, rows=1))
    assert [(b.stage, b.epsilon) for b in prepared.budgets] == [("partition", 0.0), ("counts", EPS)]
    one = Binned(np.array([[40]]), Grid(1, 1, BBOX), 40, 0, False, "lat", "lon")
    accountant = Accountant(Noise.seeded(1), prepared.cost)
    rel = run(prepared, one, accountant)
    assert rel.epsilon["partition"] == 0.0 and rel.epsilon["counts"] == EPS
    assert accountant.spent == prepared.cost
