"""`dpx release`: the CLI contract of issue 10 (method auto and every named method)."""

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.cli.location import RELEASE_METHODS
from core.spatial.selection import RULES, SELECTION_SHARE, VERY_LOW_SIGNAL

BBOX = "-118.6,33.7,-117.9,34.4"
GRID = "64"


@pytest.fixture(scope="module")
def points_csv(tmp_path_factory):
    rng = np.random.default_rng(1)
    n = 5_000
    df = pd.DataFrame(
        {
            "Latitude": np.clip(rng.normal(34.05, 0.05, n), 33.71, 34.39),
            "Longitude": np.clip(rng.normal(-118.25, 0.05, n), -118.59, -117.91),
        }
    )
    path = tmp_path_factory.mktemp("pts") / "points.csv"
    df.to_csv(path, index=False)
    return path


def release(points_csv, capsys, method, *extra):
    argv = ["release", str(points_csv), "--lat", "Latitude", "--lon", "Longitude",
            "--bbox", BBOX, "--grid", GRID, "--epsilon", "0.8", "--method", method, *extra]  # fmt: skip
    code = main(argv)
    out = capsys.readouterr()
    return code, out


def release_json(points_csv, capsys, method, *extra):
    code, out = release(points_csv, capsys, method, "--json", *extra)
    assert code == 0, out.err
    return json.loads(out.out)


def assert_tiles_and_adds_up(res):
    cover = np.zeros((64, 64), dtype=int)
    for leaf in res["leaves"]:
        cover[leaf["row0"] : leaf["row1"], leaf["col0"] : leaf["col1"]] += 1
    assert (cover == 1).all()
    assert res["n_leaves"] == len(res["leaves"])
    parts = sum(v for k, v in res["epsilon"].items() if k != "total")
    assert res["epsilon"]["total"] == 0.8
    assert parts == pytest.approx(0.8, abs=1e-12)
    assert sum(r["charged_epsilon"] for r in res["mechanisms"]) <= 0.8 + 1e-12


def test_auto_json_contract(points_csv, capsys):
    res = release_json(points_csv, capsys, "auto", "--seed", "4")
    assert res["requested_method"] == "auto"
    sel = res["selection"]
    assert res["method"] == sel["method"] in {r.method for r in RULES}
    assert sel["rule"] in {r.name for r in RULES} and sel["condition"]
    assert sel["epsilon"] == pytest.approx(SELECTION_SHARE * 0.8)
    assert res["epsilon"]["selection"] == pytest.approx(sel["epsilon"])
    assert sel["epsilon"] + sel["epsilon_build"] == pytest.approx(0.8, abs=1e-12)
    assert set(sel["features"]) == {"noisy_n", "signal"}  # round 7 measures N only
    assert sel["features"]["signal"] >= VERY_LOW_SIGNAL and sel["method"] == "privtree"
    assert set(sel["noise_scales"]) == {"n"}
    assert res["mode"] == "seeded" and res["noise"]["seed"] == 4
    assert_tiles_and_adds_up(res)
    # the selection's mechanisms are the release's and add up to its epsilon
    auto = [r["epsilon"] for r in res["mechanisms"] if r["label"].startswith("auto:")]
    assert len(auto) == 1 and sum(auto) == pytest.approx(sel["epsilon"])


@pytest.mark.parametrize("eps, built", [("0.8", "privtree"), ("0.05", "ug")])
def test_auto_text_output_on_both_sides_of_very_low_signal(points_csv, capsys, eps, built):
    """The plain-text output names the noisy N and the signal; 5,000 points at eps 0.8 give
    about 4,000 points per unit of noise (PrivTree), at eps 0.05 about 250 (UG)."""
    code, out = release(points_csv, capsys, "auto", "--seed", "3", "--epsilon", eps)
    assert code == 0, out.err
    choice = next(line for line in out.out.splitlines() if line.startswith("choice:"))
    assert "noisy_n" in choice and "signal" in choice
    res = release_json(points_csv, capsys, "auto", "--seed", "3", "--epsilon", eps)
    assert res["selection"]["method"] == built


def test_auto_is_reproducible_when_seeded(points_csv, capsys):
    a = release_json(points_csv, capsys, "auto", "--seed", "9")
    b = release_json(points_csv, capsys, "auto", "--seed", "9")
    assert a["leaves"] == b["leaves"] and a["selection"] == b["selection"]


@pytest.mark.parametrize("method", [m for m in RELEASE_METHODS if m != "auto"])
def test_every_named_method(points_csv, capsys, method):
    res = release_json(points_csv, capsys, method, "--seed", "2")
    assert res["method"] == method and res["requested_method"] == method
    assert "selection" not in res
    assert_tiles_and_adds_up(res)


def test_secure_mode_auto(points_csv, capsys):
    res = release_json(points_csv, capsys, "auto")
    assert res["mode"] == "secure" and "seed" not in res["noise"]
    assert_tiles_and_adds_up(res)


def test_unknown_method_is_refused_with_exit_2(points_csv, capsys):
    code, out = release(points_csv, capsys, "nope")
    assert code == 2 and "invalid choice: 'nope'" in out.err and "Traceback" not in out.err
    assert out.err.count("\n") == 1


def test_bad_out_extension_writes_nothing(points_csv, capsys, tmp_path):
    target = tmp_path / "r.txt"
    code, out = release(points_csv, capsys, "ug", "--out", str(target))
    assert code == 2 and "--out" in out.err and not target.exists()


def test_out_files(points_csv, capsys, tmp_path):
    gj = tmp_path / "r.geojson"
    res = release_json(points_csv, capsys, "auto", "--seed", "1", "--out", str(gj))
    data = json.loads(gj.read_text())
    assert len(data["features"]) == res["n_leaves"]
    meta = data["metadata"]  # the exported file carries the choice and its reasons
    assert meta["params"]["selection"] == res["selection"]
    assert meta["label"].startswith("Recommended (private choice)")
    assert "seed" not in meta["noise"]
    csv = tmp_path / "r.csv"
    res = release_json(points_csv, capsys, "privtree", "--seed", "1", "--out", str(csv))
    assert len(pd.read_csv(csv)) == res["n_leaves"] and (tmp_path / res["metadata"]).exists()


def test_text_output_states_the_choice(points_csv, capsys):
    code, out = release(points_csv, capsys, "auto", "--seed", "5")
    assert code == 0
    assert "requested auto" in out.out and "rule '" in out.out and "noisy features" in out.out
