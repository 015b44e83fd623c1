"""AppTest of the location-histograms page: demo and upload runs, map payload, charts, errors.

Build releases (charged) and Evaluate (owner only) are separate buttons; registry and analyst
mode are in test_location_registry.py."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

PAGE = "pages/location_histograms.py"


def _map_args(at) -> dict:
    """The release map's st_folium arguments (its script holds the Leaflet code of the map);
    not the HTF stepper's map of one depth, which a demo shows from the start (its layer names
    its styles: a `"styleNames"` entry)."""
    for el in at.get("component_instance"):
        args = json.loads(el.proto.json_args)
        if '"styleNames"' not in args["script"]:
            return args
    raise AssertionError("no map component on the page")


def _chart(at, key: str) -> dict:
    for element in at.get("plotly_chart"):
        if element.proto.id and key in element.proto.id:
            return json.loads(element.proto.spec)
    raise AssertionError(f"no plotly chart with key {key}")


def _fast(at, methods=("htf", "ug")):
    at.select_slider(key="lh_grid").set_value(64)
    at.multiselect(key="lh_methods").set_value(list(methods))
    return at


def _evaluate(at):
    """Small evaluation settings (shown after a build), then press Evaluate."""
    at.number_input(key="lh_q").set_value(50)
    at.number_input(key="lh_reps").set_value(2).run()
    at.button(key="lh_eval").click().run()
    assert not at.exception, at.exception
    return at


def test_demo_run_shows_map_layer_and_charts(app_test):
    at = app_test(PAGE).run()
    assert not at.exception
    assert any("Build releases" in i.value for i in at.info)
    _fast(at).run()
    at.button(key="lh_run").click().run()
    assert not at.exception, at.exception
    args = _map_args(at)
    script = args["script"]
    assert script.count("L.geoJson(null") == 2  # one GeoJSON layer per method
    assert "HTF (" in script and "UG (" in script  # named by display name
    assert "dpxLand" in script and "dpx-legend" in script  # offline boundaries and the legend
    assert '"noisy_count"' in script and '"color"' in script
    assert "cdn" not in " ".join(args["js_links"] + args["css_links"])  # Leaflet inlined locally
    assert args["js_links"][0].startswith("data:text/javascript")
    assert args["returned_objects"] == []
    assert _chart(at, "lh_budget")["layout"]["barmode"] == "stack"
    labels = [b.label for b in at.get("download_button")]
    assert labels == [
        "Release GeoJSON",
        "Release CSV",
        "Release CSV metadata (JSON)",
        "Run report (JSON)",
    ]
    assert not any("lh_mre" in (e.proto.id or "") for e in at.get("plotly_chart"))
    _evaluate(at)
    spec = _chart(at, "lh_mre")
    assert {t["name"] for t in spec["data"]} == {"HTF", "UG"}  # display names, not keys
    assert all(t["error_y"]["visible"] for t in spec["data"])
    labels = [b.label for b in at.get("download_button")]
    assert "MRE CSV (evaluation only)" in labels
    assert any("Evaluation cost" in i.value and "not charged" in i.value for i in at.info)
    # secure mode by default; the data-owner-only counts are labelled as such
    assert any("Secure mode" in s.value for s in at.success)
    assert any("data owner only" in c.value for c in at.caption)


def test_upload_run_and_bbox(app_test):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"Latitude": rng.normal(48.85, 0.02, 3000), "Longitude": rng.normal(2.35, 0.02, 3000)}
    )
    at = app_test(PAGE).run()
    at.radio(key="lh_source").set_value("Upload CSV/Parquet").run()
    assert any("Upload a file" in i.value for i in at.info)
    at.file_uploader(key="lh_upload").set_value(
        ("paris.csv", df.to_csv(index=False).encode(), "text/csv")
    ).run()
    assert not at.exception
    digest_keys = [w.key for w in at.selectbox if w.key and w.key.startswith("lh_lat_")]
    assert at.selectbox(key=digest_keys[0]).value == "Latitude"  # auto-detected
    # no silent world default: building needs a public region first
    assert not any(b.key == "lh_run" for b in at.button)
    assert any("public region" in i.value for i in at.info)
    region = next(w.key for w in at.selectbox if w.key and w.key.startswith("lh_region_"))
    at.selectbox(key=region).set_value("custom").run()
    assert any("all four values" in i.value for i in at.info)
    for i, v in enumerate([2.2, 48.7, 2.5, 49.0]):
        key = next(w.key for w in at.number_input if w.key and w.key.startswith(f"lh_bb{i}_"))
        at.number_input(key=key).set_value(v)
    at.run()
    _fast(at, ("htf",)).run()
    at.button(key="lh_run").click().run()
    assert not at.exception
    assert _map_args(at)["script"].count("L.geoJson(null") == 1


def test_bad_upload_shows_error_and_releases_nothing(app_test):
    at = app_test(PAGE).run()
    at.radio(key="lh_source").set_value("Upload CSV/Parquet").run()
    bad = pd.DataFrame({"lat": ["north"] * 20, "lon": [1.0] * 20}).to_csv(index=False).encode()
    at.file_uploader(key="lh_upload").set_value(("bad.csv", bad, "text/csv")).run()
    assert not at.exception
    assert any("no row has a usable latitude" in e.value for e in at.error)
    assert not at.get("component_instance")


def test_an_upload_with_a_coordinate_outside_its_domain_is_binned_not_refused(app_test):
    """Issue 27: a longitude of 181 (or a text) is dropped like a point outside the bbox; the
    owner is told how many rows, labelled private, and the page goes on."""
    at = app_test(PAGE).run()
    at.radio(key="lh_source").set_value("Upload CSV/Parquet").run()
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"lat": rng.uniform(48.7, 49.0, 60), "lon": rng.uniform(2.2, 2.5, 60)})
    df = df.astype(object)
    df.loc[3, "lon"], df.loc[4, "lat"] = 181.0, "north"
    data = df.to_csv(index=False).encode()
    at.file_uploader(key="lh_upload").set_value(("pts.csv", data, "text/csv")).run()
    assert not at.exception and not at.error
    notes = [c.value for c in at.caption if "left out" in c.value]
    assert notes and notes[0].startswith("2 row(s)") and "data owner, only" in notes[0]


def test_reruns_after_a_build_keep_the_results(app_test):
    """The blocker of issue 8: any rerun after a build (a widget, a download) must not crash."""
    at = _fast(app_test(PAGE).run()).run()
    at.button(key="lh_run").click().run()
    assert not at.exception, at.exception
    first = _map_args(at)["script"]
    at.selectbox(key="lh_dl").set_value("ug").run()  # "Release to download"
    assert not at.exception, at.exception
    assert _map_args(at)["script"] == first  # the same release, not a rebuild
    at.toggle(key="lh_tiles").set_value(True).run()
    assert not at.exception, at.exception
    at.run()
    assert not at.exception and _map_args(at)


def test_a_second_session_builds_its_own_results(app_test):
    """Two sessions with the same parameters: no shared cache replaying one session's elements."""
    a = _fast(app_test(PAGE).run()).run()
    a.button(key="lh_run").click().run()
    b = _fast(app_test(PAGE).run()).run()
    b.button(key="lh_run").click().run()
    assert not a.exception and not b.exception, (a.exception, b.exception)
    b.selectbox(key="lh_dl").set_value("ug").run()
    assert not b.exception and _map_args(b)


def test_changed_parameters_label_the_old_results_as_stale(app_test):
    at = _fast(app_test(PAGE).run()).run()
    at.button(key="lh_run").click().run()
    _evaluate(at)
    at.number_input(key="lh_reps").set_value(1).run()  # evaluation settings: evaluation stale
    assert any("other evaluation settings" in w.value for w in at.warning)
    assert not any("previous build" in w.value for w in at.warning)
    at.number_input(key="lh_reps").set_value(2).run()
    assert not any("other evaluation settings" in w.value for w in at.warning)
    at.select_slider(key="lh_eps").set_value(1.0).run()  # a build parameter: the build is stale
    assert any("previous build" in w.value for w in at.warning)
    assert at.button(key="lh_eval").disabled  # evaluate only what the map shows
    at.select_slider(key="lh_eps").set_value(0.5).run()  # back to the built parameters
    assert not any("previous build" in w.value for w in at.warning)


def test_failed_build_leaves_no_stale_result(app_test):
    at = _fast(app_test(PAGE).run()).run()
    at.button(key="lh_run").click().run()
    assert _map_args(at)
    at.selectbox(key="lh_region_demo:htf-gaussian-sigma20").set_value("london").run()
    assert any("outside the bounding box" in e.value for e in at.error)
    assert not at.get("component_instance")  # nothing drawn under the error


def test_a_person_column_makes_the_release_protect_people(app_test):
    """Upload with a user column: choosing it and K says 'each person (at most K points)', the
    owner sees how many points the bound left out, and the built release's mechanisms have
    sensitivity K."""
    rng = np.random.default_rng(3)
    users = rng.integers(0, 40, 3000)  # 40 people, ~75 points each
    df = pd.DataFrame(
        {
            "user": [f"p{u}" for u in users],
            "Latitude": rng.normal(48.85, 0.02, 3000),
            "Longitude": rng.normal(2.35, 0.02, 3000),
        }
    )
    at = app_test(PAGE).run()
    at.radio(key="lh_source").set_value("Upload CSV/Parquet").run()
    at.file_uploader(key="lh_upload").set_value(
        ("people.csv", df.to_csv(index=False).encode(), "text/csv")
    ).run()
    person = next(w.key for w in at.selectbox if w.key and w.key.startswith("lh_person_"))
    at.selectbox(key=person).set_value("user").run()
    at.number_input(key="lh_person_k").set_value(5)
    region = next(w.key for w in at.selectbox if w.key and w.key.startswith("lh_region_"))
    at.selectbox(key=region).set_value("custom").run()
    for i, v in enumerate([2.2, 48.7, 2.5, 49.0]):
        key = next(w.key for w in at.number_input if w.key and w.key.startswith(f"lh_bb{i}_"))
        at.number_input(key=key).set_value(v)
    at.run()
    _fast(at, ("ug",)).run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "Privacy unit: one person (column user; at most 5 rows each)." in captions
    assert "left out by the per-person bound" in captions
    at.button(key="lh_run").click().run()
    assert not at.exception, at.exception
    from ui.location.release import BUILD_KEY

    (charged,) = at.session_state[BUILD_KEY].charged
    assert charged.release.unit.k == 5
    assert all(m.sensitivity == 5 for m in charged.release.mechanisms)
