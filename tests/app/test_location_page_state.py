"""The location page's state is one typed object (issue 28, `ui.location.request`).

* `LocationBuildRequest` is frozen and typed (the core's `HTFOptions`, the page's `Columns`, the
  public `Grid`), and the page's kept Build holds it (no parameter dict);
* its fingerprint (what marks a kept build, evaluation or trace stale) changes with every field,
  nested ones included, and equal widget values give equal fingerprints;
* its record (the run report's `parameters`) keeps the keys and values the page wrote before;
* what the page records in the registry for a build equals what `dpx release` records for the
  same inputs, but for the door (via, session / input, seed, data): through the page's own
  governed flow, and through the page itself (AppTest).
"""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest

from core.cli import main
from core.governance import Role
from core.governance.location import release_methods
from core.privacy import Noise
from core.registry import Registry
from core.spatial.demos import DEMOS
from core.spatial.evaluate import stream
from core.spatial.export import run_report
from core.spatial.grid import Grid
from core.spatial.pipeline import prepare as bin_points
from core.spatial.service import HTFOptions
from tests.registry.helpers import write_points
from ui.location.params import Columns
from ui.location.release import BUILD_KEY, Build, prepare_all
from ui.location.request import LocationBuildRequest

PAGE = "pages/location_histograms.py"
BBOX = (-118.5, 33.7, -117.9, 34.3)
EPS = 0.5
GRID = 64
SEED = 4
METHODS = ("ug", "htf")
APP_DOOR = {"via", "session", "seed", "data"}  # what the page adds to a registry row
CLI_DOOR = {"via", "seed", "input"}  # what `dpx release` adds


def request(person: str | None = "uid", k: int | None = 3, seed: int | None = SEED):
    return LocationBuildRequest.of(
        EPS, HTFOptions(), METHODS, Columns("lat", "lon", GRID, person, k), BBOX, False,
        Grid(GRID, GRID, BBOX), "upload:visits", Noise.from_seed(seed),
    )  # fmt: skip


def _changed(value):
    """Another value of the same type (no field is left as it was)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value * 2 + 1
    if isinstance(value, str):
        return value + "-other"
    if value is None:
        return 2
    raise AssertionError(f"no change for {value!r}")


def _variants(r: LocationBuildRequest) -> dict[str, list[LocationBuildRequest]]:
    """For each field of the request, requests differing from `r` in that field only (nested
    options and columns: one variant per inner field)."""
    other_box = (BBOX[0] + 0.1, *BBOX[1:])
    top = {
        "epsilon": [EPS * 2],
        "htf": [
            dataclasses.replace(r.htf, **{f.name: _changed(getattr(r.htf, f.name))})
            for f in dataclasses.fields(HTFOptions)
        ],
        "methods": [METHODS[:1], METHODS[::-1]],
        "columns": [
            dataclasses.replace(r.columns, **{f.name: _changed(getattr(r.columns, f.name))})
            for f in dataclasses.fields(Columns)
        ],
        "bbox": [other_box, None],
        "bbox_from_data": [not r.bbox_from_data],
        "grid": [Grid(GRID // 2, GRID, BBOX), Grid(GRID, GRID, other_box)],
        "data": [r.data + "-other"],
        "seed": [None, SEED + 1],
    }
    assert set(top) == {f.name for f in dataclasses.fields(LocationBuildRequest)}
    return {k: [dataclasses.replace(r, **{k: v}) for v in vs] for k, vs in top.items()}


def test_the_page_state_is_one_frozen_typed_object():
    r = request()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.epsilon = 1.0  # type: ignore[misc]
    assert isinstance(r.htf, HTFOptions) and isinstance(r.columns, Columns)
    assert isinstance(r.grid, Grid) and isinstance(r.methods, tuple)
    assert hash(r) == hash(request())  # hashable: every part frozen
    # the sidebar's values as a mapping and a list give the same request as typed ones
    loose = LocationBuildRequest.of(
        EPS, dataclasses.asdict(HTFOptions()), list(METHODS), Columns("lat", "lon", GRID, "uid", 3),
        list(BBOX), False, Grid(GRID, GRID, BBOX), "upload:visits", Noise.seeded(SEED),
    )  # fmt: skip
    assert loose == r and loose.fingerprint() == r.fingerprint()


def test_a_change_in_any_field_changes_the_fingerprint_and_equal_widgets_do_not():
    r = request()
    assert request().fingerprint() == r.fingerprint()  # built again from the same widgets
    seen = {r.fingerprint()}
    for name, variants in _variants(r).items():
        for v in variants:
            assert v != r, name
            assert v.fingerprint() != r.fingerprint(), f"{name}: {v}"
            seen.add(v.fingerprint())
    assert len(seen) == 1 + sum(len(v) for v in _variants(r).values())  # all distinct


@pytest.mark.parametrize(("person", "k", "seed"), [("uid", 3, SEED), (None, None, None)])
def test_the_record_keeps_the_run_report_parameters_the_page_wrote(person, k, seed):
    """The run report's `parameters`: the keys and values `release_params` wrote before the
    typed request (the report format is unchanged)."""
    r = request(person, k, seed)
    before = {  # pages/location_histograms.py's release_params, as it was
        "epsilon": EPS, "methods": list(METHODS), "seed": seed,
        "mode": Noise.from_seed(seed).mode, "htf": dataclasses.asdict(HTFOptions()),
        "grid": [GRID, GRID], "bbox": list(BBOX), "lat": "lat", "lon": "lon",
        "bbox_from_data": False, "data": "upload:visits",
        "person": None if person is None else [person, k],
    }  # fmt: skip
    assert json.dumps(r.record(), sort_keys=True) == json.dumps(before, sort_keys=True)
    report = run_report(r, r.noise, r.grid, {"releases": []})
    assert report["parameters"] == before
    assert report["noise"] == Noise.from_seed(seed).describe()
    assert report["grid"] == r.grid.describe()


def _cli_rows(registry: Registry, path, r: LocationBuildRequest, capsys) -> dict[str, dict]:
    """`dpx release` once per method of `r`, from its parameters as arguments."""
    bbox = ",".join(str(v) for v in r.grid.bbox)
    for method in r.methods:
        argv = ["release", str(path), "--method", method, "--lat", r.columns.lat, "--lon",
                r.columns.lon, f"--bbox={bbox}", "--grid", str(r.grid.ny), "--epsilon",
                str(r.epsilon), "--json"]  # fmt: skip
        if r.seed is not None:
            argv += ["--seed", str(r.seed)]
        if r.person:
            argv += ["--uid", r.person[0], "--max-points-per-person", str(r.person[1])]
        assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    return {x.method: x.params for x in registry.releases() if x.params["via"] == "cli"}


def _without(params: dict, door: set[str]) -> dict:
    return {k: v for k, v in params.items() if k not in door}


@pytest.mark.parametrize(("person", "k", "seed"), [("uid", 3, SEED), (None, None, None)])
def test_the_page_records_what_dpx_release_records(person, k, seed, registry_dir, tmp_path,
                                                   capsys, monkeypatch):  # fmt: skip
    """The page's governed build (`release_methods` with the request's `LocationParams`, its
    per-method noise stream and its door) and `dpx release` record the same parameters."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    path = write_points(tmp_path / "visits.csv")
    r = request(person, k, seed)
    registry = Registry(registry_dir)
    data = bin_points(pd.read_csv(path), "lat", "lon", BBOX, GRID, GRID, unit=r.unit,
                      noise=r.noise)  # fmt: skip
    prepared = prepare_all(r.location_params(), None)
    release_methods(registry, Role.OWNER, None, prepared, data,
                    lambda m: stream(r.seed, 0, f"release:{m}"), r.door("session-1"))  # fmt: skip
    page = {x.method: x.params for x in registry.releases() if x.params["via"] == "app"}
    cli = _cli_rows(registry, path, r, capsys)
    assert set(page) == set(cli) == {p.method for p in prepared}
    for method in page:
        assert _without(page[method], APP_DOOR) == _without(cli[method], CLI_DOOR)
        assert page[method]["data"] == r.data and page[method]["seed"] == r.seed
        assert page[method]["session"] == "session-1"


def test_the_pages_build_keeps_the_request_and_records_what_dpx_release_records(
    app_test, registry_dir, tmp_path, capsys, monkeypatch
):
    """The page itself: its kept Build holds the typed request of the widgets on screen, and its
    registry row is the CLI's for the same inputs (the demo's points written to a file)."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    at = app_test(PAGE).run()
    at.select_slider(key="lh_grid").set_value(GRID)
    at.multiselect(key="lh_methods").set_value(["ug"]).run()
    at.button(key="lh_run").click().run()
    assert not at.exception, at.exception
    b = at.session_state[BUILD_KEY]
    assert isinstance(b, Build) and isinstance(b.request, LocationBuildRequest)
    r = b.request
    assert r.methods == ("ug",) and r.grid.ny == GRID and b.fingerprint == r.fingerprint()
    demo = next(d for d in DEMOS if r.data.endswith(d.name))
    path = tmp_path / "demo.csv"
    demo.load().to_csv(path, index=False)
    registry = Registry(registry_dir)
    (page,) = [x.params for x in registry.releases() if x.params["via"] == "app"]
    cli = _cli_rows(registry, path, r, capsys)
    assert _without(page, APP_DOOR) == _without(cli["ug"], CLI_DOOR)
    assert page["data"] == r.data and page["seed"] == r.seed


def test_a_build_kept_by_an_older_page_is_dropped_not_shown(app_test, registry_dir, monkeypatch):
    """A session's work is kept on disk across restarts: a Build pickled before the typed
    request (no `request`) is forgotten, not drawn (it would fail on its missing request)."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    at = app_test(PAGE)
    at.session_state[BUILD_KEY] = Build.__new__(Build)  # an old Build: none of today's fields
    at.run()
    assert not at.exception, at.exception
    assert any("press **Build releases**" in i.value for i in at.info)
    assert BUILD_KEY not in at.session_state
