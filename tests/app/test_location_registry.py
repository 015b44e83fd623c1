"""AppTest of the location page on the release registry (issue 12) and in analyst mode.

Build charges one release per method to a registered dataset (refusals shown and recorded,
nothing built); demo tables are recorded as unregistered runs; Evaluate charges nothing; a
second session sees the registry's spend; analyst mode offers registered datasets only and no
raw counts, evaluation, tuning, teaching view or seeded noise."""

from __future__ import annotations

import json

import pytest

from core.registry import Policy, Registry, RunKind, Status
from core.reports import report_html
from tests.registry.helpers import write_points
from ui.noise import MODE_KEY, SEED_KEY

PAGE = "pages/location_histograms.py"
BBOX = [-118.5, 33.7, -117.9, 34.3]


@pytest.fixture
def registry(registry_dir, tmp_path, monkeypatch) -> Registry:
    """Dataset 'visits' (400 points around Los Angeles), total ε 2, not teaching."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    path = write_points(tmp_path / "visits.csv")
    reg = Registry(registry_dir)
    reg.add_dataset("visits", [("t", path)], Policy(2.0))
    return reg


def _key(at, kind: str, prefix: str) -> str:
    return next(w.key for w in getattr(at, kind) if w.key and w.key.startswith(prefix))


def _registered(at, methods=("ug", "privtree"), eps=0.5):
    at.run()
    if any(r.key == "lh_source" and "Registered dataset" in r.options for r in at.radio):
        at.radio(key="lh_source").set_value("Registered dataset").run()
    at.selectbox(key=_key(at, "selectbox", "lh_region_")).set_value("custom").run()
    for i, v in enumerate(BBOX):
        at.number_input(key=_key(at, "number_input", f"lh_bb{i}_")).set_value(v)
    at.run()
    at.select_slider(key="lh_grid").set_value(64)
    at.select_slider(key="lh_eps").set_value(eps)
    at.multiselect(key="lh_methods").set_value(list(methods)).run()
    assert not at.exception, at.exception
    return at


def _map_script(at) -> str:
    (el,) = at.get("component_instance")
    return json.loads(el.proto.json_args)["script"]


def test_build_charges_each_method_once_and_the_map_shows_those_releases(app_test, registry):
    at = _registered(app_test(PAGE))
    assert any(
        "charges ε 1 (2 releases, ε 0.5 each" in m.value and "dataset **visits**" in m.value
        for m in at.markdown
    )
    at.button(key="lh_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    releases = registry.releases("visits")
    assert sorted(r.method for r in releases) == ["privtree", "ug"]
    assert all(r.kind is RunKind.RELEASE and r.status is Status.RELEASED for r in releases)
    assert registry.spent("visits")[0] == pytest.approx(1.0)
    script = _map_script(at)
    for r in releases:  # the map draws exactly the charged leaves
        assert f"({len(r.artefact['leaves']):,} leaves)" in script
    assert any("ε spent 1 of 2" in c.value for c in at.caption)  # after the rerun
    for r in releases:  # each release's report renders its leaves (the Releases page's file)
        html = report_html(registry, r.id)
        assert "leaves-map" in html and "on a 64 × 64 grid" in html
    # a second session (a reload) sees the registry's spend, not its own
    other = _registered(app_test(PAGE))
    assert any("ε spent 1 of 2" in c.value for c in other.caption)


def test_over_budget_is_refused_recorded_and_nothing_built(app_test, registry):
    at = _registered(app_test(PAGE), methods=("ug", "privtree", "quadtree"), eps=1.0)
    at.button(key="lh_run").click().run()
    assert any("budget" in e.value and "remaining epsilon 2" in e.value for e in at.error)
    assert registry.releases("visits") == [] and len(registry.refusals("visits")) == 1
    assert registry.spent("visits") == (0.0, 0.0)
    assert not at.get("component_instance") and not at.get("download_button")


def test_evaluation_charges_nothing_and_says_what_it_cost(app_test, registry):
    at = _registered(app_test(PAGE))
    at.button(key="lh_run").click().run()
    at.number_input(key="lh_q").set_value(50)
    at.number_input(key="lh_reps").set_value(2).run()
    at.button(key="lh_eval").click().run()
    assert not at.exception, at.exception
    assert registry.spent("visits")[0] == pytest.approx(1.0)  # still only the two releases
    assert len(registry.releases("visits")) == 2
    # 2 reps × 2 methods × ε 0.5 = 2, shown as evaluation cost
    assert any("ε = 2 in total" in i.value and "not charged" in i.value for i in at.info)


def test_demo_build_is_an_unregistered_run(app_test, registry):
    at = app_test(PAGE).run()
    at.select_slider(key="lh_grid").set_value(64)
    at.multiselect(key="lh_methods").set_value(["ug"]).run()
    at.button(key="lh_run").click().run()
    assert not at.exception
    (run,) = registry.releases(kind=RunKind.UNREGISTERED)
    assert run.dataset is None and run.method == "ug" and run.params["via"] == "app"
    assert any(f"unregistered runs #{run.id}" in m.value for m in at.markdown)


def test_seeded_build_refused_on_registered_data(app_test, registry):
    at = app_test(PAGE)
    at.session_state[MODE_KEY] = True
    at.session_state[SEED_KEY] = 3
    at = _registered(at)
    at.button(key="lh_run").click().run()
    assert any("seeded" in e.value for e in at.error)
    assert registry.releases("visits") == [] and len(registry.refusals("visits")) == 1
    assert not at.get("component_instance")


def test_analyst_mode_registered_only_no_raw_data_views(app_test, registry, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test(PAGE).run()
    assert at.radio(key="lh_source").options == ["Registered dataset"]
    at = _registered(at)
    assert not any("data owner only" in c.value for c in at.caption)  # no raw point counts
    # ε 1 of the 2 remaining is more than a quarter: the button waits for a confirmation
    assert at.button(key="lh_run").disabled
    at.checkbox(key=_key(at, "checkbox", "lh_run::confirm")).check().run()
    at.button(key="lh_run").click().run()
    assert not at.exception and not at.error
    assert registry.spent("visits")[0] == pytest.approx(1.0)  # releases work and are charged
    assert not any(b.key == "lh_eval" for b in at.button)  # no evaluation against raw data
    assert not any(t.key == "lh_overlay" for t in at.toggle)  # no raw-point sample
    labels = [e.label for e in at.expander]
    assert not any("Tuning" in x or "step by step" in x or "Evaluation" in x for x in labels)
    assert at.get("download_button")  # the releases themselves can be downloaded
    # the file's SHA-256 (a function of the raw rows) is neither in a widget key (keys reach
    # the browser as CSS classes) nor in the recorded parameters (reports show them)
    sha = registry.dataset("visits").tables[0].sha256
    keys = [
        w.key or "" for kind in ("selectbox", "number_input", "radio") for w in getattr(at, kind)
    ]
    assert keys and not any(sha in k for k in keys)
    assert all(sha not in json.dumps(r.params) for r in registry.releases("visits"))


def test_analyst_bins_without_data_dependent_refusals(app_test, registry_dir, tmp_path,
                                                      monkeypatch):  # fmt: skip
    """A region with no points fails for the owner (with a count) but not for an analyst."""
    monkeypatch.setenv("DPX_MODE", "analyst")
    reg = Registry(registry_dir)
    reg.add_dataset("visits", [("t", write_points(tmp_path / "v.csv"))], Policy(2.0))
    at = app_test(PAGE).run()
    at.selectbox(key=_key(at, "selectbox", "lh_region_")).set_value("london").run()
    at.select_slider(key="lh_grid").set_value(64)
    at.multiselect(key="lh_methods").set_value(["ug"]).run()
    assert not at.error, [e.value for e in at.error]
    at.button(key="lh_run").click().run()
    assert not at.exception and not at.error
    assert reg.spent("visits")[0] == pytest.approx(0.5)


def test_a_build_says_which_releases_were_planned(app_test, registry):
    """Two methods against a plan with room for one: each release named with its standing."""
    from core.planning.budget import parse_item

    plan = registry.save_plan(
        "visits", "maps", [parse_item("location:0.5:method=ug").to_json()], 0.5
    )
    at = _registered(app_test(PAGE))
    at.button(key="lh_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ids = {r.method: r.id for r in registry.releases("visits")}
    (line,) = [m.value for m in at.markdown if "Charged to dataset" in m.value]
    assert (
        f"Release #{ids['ug']}: as planned: item 'location (method=ug)' of budget plan "
        f"#{plan.id} (maps)." in line
    )
    assert f"Release #{ids['privtree']}: beyond the plan: no item of budget plan #{plan.id}" in line
