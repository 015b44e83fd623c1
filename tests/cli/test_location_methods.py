"""The location methods are one table (issue 28): `dpx release --method` takes exactly the
methods the location page offers, under the same names, and a seeded `dpx release` releases
what the page's build releases with the same seed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from core.cli import build_parser, main
from core.spatial.methods import LABELS, Door, location_method_names
from core.spatial.release import charge_rows
from ui.location.inputs import all_methods
from ui.noise import MODE_KEY, SEED_KEY

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "location_histograms.py")
BBOX = (2.2, 48.7, 2.5, 49.0)
SEED, EPS, GRID = 3, 0.5, 64
NEW_DOOR = ("privelet", "kdtree-hybrid")  # refused as "invalid choice" by dpx release before


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[name]


def cli_release_choices() -> list[str]:
    """`dpx release --method`'s choices, as argparse holds them."""
    action = next(a for a in _subparser("release")._actions if a.dest == "method")
    return list(action.choices)


@pytest.fixture(scope="module")
def points_csv(tmp_path_factory) -> Path:
    rng = np.random.default_rng(7)
    n = 3000
    df = pd.DataFrame(
        {"Latitude": rng.normal(48.85, 0.03, n), "Longitude": rng.normal(2.35, 0.03, n)}
    )
    path = tmp_path_factory.mktemp("pts") / "paris.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def people_csv(tmp_path_factory) -> Path:
    rng = np.random.default_rng(3)
    n = 3000
    df = pd.DataFrame(
        {
            "user": [f"p{u}" for u in rng.integers(0, 40, n)],  # ~75 points a person
            "Latitude": rng.normal(48.85, 0.02, n),
            "Longitude": rng.normal(2.35, 0.02, n),
        }
    )
    path = tmp_path_factory.mktemp("people") / "people.csv"
    df.to_csv(path, index=False)
    return path


def _page(
    points_csv: Path,
    methods: list[str] | None = None,
    seed: int | None = SEED,
    person: tuple[str, int] | None = None,
):
    """The location page on an upload of `points_csv`, the custom bbox BBOX, a GRID grid,
    seeded (demo) noise, with `person` (column, K) a person column, and with `methods` those
    methods chosen (not yet built)."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    if seed is not None:
        at.session_state[MODE_KEY] = True
        at.session_state[SEED_KEY] = seed
    at.run()
    at.radio(key="lh_source").set_value("Upload CSV/Parquet").run()
    at.file_uploader(key="lh_upload").set_value(
        (points_csv.name, points_csv.read_bytes(), "text/csv")
    ).run()
    if person is not None:
        key = next(w.key for w in at.selectbox if w.key and w.key.startswith("lh_person_"))
        at.selectbox(key=key).set_value(person[0]).run()
        at.number_input(key="lh_person_k").set_value(person[1])
    region = next(w.key for w in at.selectbox if w.key and w.key.startswith("lh_region_"))
    at.selectbox(key=region).set_value("custom").run()
    for i, v in enumerate(BBOX):
        key = next(w.key for w in at.number_input if w.key and w.key.startswith(f"lh_bb{i}_"))
        at.number_input(key=key).set_value(v)
    at.run()
    at.select_slider(key="lh_grid").set_value(GRID)
    at.select_slider(key="lh_eps").set_value(EPS)
    if methods is not None:
        at.multiselect(key="lh_methods").set_value(methods)
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_cli_releases_exactly_the_methods_the_page_offers(points_csv):
    """Same names, same set, both doors: the page's selector (its helper and what it renders)
    and argparse's choices are the table's releasable methods."""
    choices = cli_release_choices()
    assert all_methods() == choices
    assert set(NEW_DOOR) <= set(choices)
    at = _page(points_csv, seed=None)
    shown = at.multiselect(key="lh_methods").options  # rendered through the page's labels
    assert shown == [LABELS[m] for m in choices]
    assert choices == list(location_method_names(Door.RELEASE))


def test_release_help_lists_each_release_method_with_its_label():
    text = _subparser("release").format_help()
    for name in cli_release_choices():
        assert f"  {name:<17}{LABELS[name]}" in text


def _cli_release(points_csv: Path, method: str, capsys, *extra: str) -> dict:
    bbox = ",".join(map(str, BBOX))
    argv = ["release", str(points_csv), "--lat", "Latitude", "--lon", "Longitude", "--bbox",
            bbox, "--grid", str(GRID), "--epsilon", str(EPS), "--method", method, "--seed",
            str(SEED), "--json", *extra]  # fmt: skip
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_seeded_cli_release_is_the_pages_release(points_csv, capsys):
    """`dpx release --method M --seed S` on a file, and the page's Build on the same file with
    seed S: the same leaves, the same noisy values, the same mechanisms, under the name M."""
    from ui.location.release import BUILD_KEY

    at = _page(points_csv, list(NEW_DOOR))
    at.button(key="lh_run").click().run()
    assert not at.exception, at.exception
    page = at.session_state[BUILD_KEY].releases
    for method in NEW_DOOR:
        assert_same_release(_cli_release(points_csv, method, capsys), page[method], method)


def test_seeded_cli_release_with_a_person_column_is_the_pages_release(people_csv, capsys):
    """With --uid/--max-points-per-person (the page's person column and K) too: the same
    people keep the same points, and the same noise draws."""
    from ui.location.release import BUILD_KEY

    at = _page(people_csv, ["kdtree-hybrid"], person=("user", 5))
    at.button(key="lh_run").click().run()
    assert not at.exception, at.exception
    (rel,) = at.session_state[BUILD_KEY].releases.values()
    assert rel.unit.k == 5
    cli = _cli_release(people_csv, "kdtree-hybrid", capsys, "--uid", "user",
                       "--max-points-per-person", "5")  # fmt: skip
    assert cli["unit"] == rel.unit.to_json()
    assert_same_release(cli, rel, "kdtree-hybrid")


def assert_same_release(cli: dict, rel, method: str) -> None:
    assert cli["method"] == cli["requested_method"] == rel.method == method
    assert cli["mode"] == "seeded" and cli["n_leaves"] == rel.n_leaves
    leaves = [[r["row0"], r["row1"], r["col0"], r["col1"]] for r in cli["leaves"]]
    assert leaves == rel.leaves.tolist()
    assert [r["noisy_count"] for r in cli["leaves"]] == pytest.approx(rel.values.tolist())
    assert cli["mechanisms"] == json.loads(json.dumps(charge_rows(rel)))


@pytest.mark.parametrize("name", location_method_names(Door.RELEASE))
@pytest.mark.parametrize("epsilon", ["1e-300", "1e-6", "0.0002"])
def test_a_tiny_epsilon_is_refused_before_the_charge_or_released(
    points_csv, tmp_path, monkeypatch, capsys, name, epsilon
):
    """Every method either releases at a tiny ε or refuses it before anything is charged —
    never an internal error (HTF's budget split went negative: a ValueError) and never a run
    that fails after its charge."""
    from core.registry import Registry

    monkeypatch.setenv("DPX_REGISTRY", str(tmp_path / "reg"))
    bbox = "--bbox=" + ",".join(map(str, BBOX))
    out = tmp_path / "o.geojson"
    code = main(["release", str(points_csv), "--method", name, "--epsilon", epsilon, bbox,
                 "--grid", str(GRID), "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert "internal error" not in err and code in (0, 2), err
    runs = Registry(tmp_path / "reg").releases() if (tmp_path / "reg").exists() else []
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and "Fix:" in err, err
        assert runs == [] and not out.exists()  # refused before any charge
    else:
        assert [r.status.value for r in runs] == ["released"] and out.exists()
