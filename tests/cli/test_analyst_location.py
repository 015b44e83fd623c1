"""The analyst role on the location commands: registered datasets only, secure noise only, no
evaluation, and every output (stdout, --json, --out files, errors) rendered from the record."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.registry import Registry
from tests.cli.conftest import run_dpx

BBOX = "--bbox=-118.5,33.7,-117.9,34.3"
SENTINEL_LAT = "34.0123456789"  # a raw value planted in the data: it must never be printed


@pytest.fixture
def dataset(tmp_path, registry_dir, capsys):
    rng = np.random.default_rng(3)
    n = 537  # an exact count that must not appear either
    frame = pd.DataFrame(
        {
            "person": rng.integers(0, 60, n),
            "lat": 34.0 + rng.normal(0, 0.05, n),
            "lon": -118.2 + rng.normal(0, 0.05, n),
        }
    )
    frame.loc[0, "lat"] = float(SENTINEL_LAT)
    path = tmp_path / "visits.csv"
    frame.to_csv(path, index=False)
    argv = ["dataset", "add", "visits", "--table", f"t={path}", "--uid", "person",
            "--epsilon", "5"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    return path


def run(capsys, monkeypatch, argv, role="analyst"):
    return run_dpx(capsys, monkeypatch, argv, role)


def test_analyst_release_is_rendered_from_the_record(dataset, capsys, monkeypatch, tmp_path):
    out_file = tmp_path / "leaves.geojson"
    argv = ["release", "--dataset", "visits", "--method", "ug", BBOX, "--grid", "64",
            "--epsilon", "1", "--max-points-per-person", "4", "--out", str(out_file), "--json"]  # fmt: skip
    code, out, err = run(capsys, monkeypatch, argv)
    assert code == 0, err
    view = json.loads(out)
    record = Registry().release(view["release_id"])
    assert view["result"] == record.artefact and view["registry"]["epsilon_charged"] == 1.0
    assert [m["label"] for m in view["mechanisms"]] == [m.label for m in record.mechanisms]
    assert view["unit"] == "one person (column person; at most 4 rows each)"  # PrivacyUnit
    written = out_file.read_text()
    for text in (out, err, written):
        # the sentinel, and the exact count as a number on its own (noisy floats may hold "537")
        assert SENTINEL_LAT not in text and not re.search(r"(?<![\d.])537(?![\d.])", text)
        assert '"n_points_used"' not in text and '"n_points_dropped":' not in text
    # the file holds exactly the recorded leaves
    features = json.loads(written)["features"]
    assert len(features) == len(record.artefact["leaves"])
    code, text_out, _ = run(capsys, monkeypatch, argv[:-3])  # text output, no --out
    assert code == 0 and "release #" in text_out and "points used" not in text_out


@pytest.mark.parametrize(
    "argv, words",
    [
        (["release", "FILE", "--method", "ug", BBOX, "--epsilon", "1"], "INPUT gives files"),
        (["release", "--dataset", "visits", "--method", "ug", BBOX, "--epsilon", "1",
          "--max-points-per-person", "2", "--seed", "3"], "secure noise only"),
        (["compare", "FILE", BBOX, "--epsilon", "1"], "data owner"),
        (["htf", BBOX, "--epsilon", "1"], "--dataset NAME"),
    ],
)  # fmt: skip
def test_what_the_analyst_role_forbids_exits_2_with_one_line(
    dataset, capsys, monkeypatch, argv, words
):
    argv = [str(dataset) if a == "FILE" else a for a in argv]
    spent = Registry().spent("visits")
    code, out, err = run(capsys, monkeypatch, argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err
    assert "Traceback" not in err and SENTINEL_LAT not in err
    assert Registry().spent("visits") == spent  # nothing charged


def test_owner_output_keeps_its_labelled_evaluation_counts(dataset, capsys, monkeypatch):
    argv = ["release", "--dataset", "visits", "--method", "ug", BBOX, "--grid", "64",
            "--epsilon", "1", "--max-points-per-person", "4"]  # fmt: skip
    code, out, _ = run(capsys, monkeypatch, argv, role="owner")
    assert code == 0 and "points used" in out and "owner, only" in out


def test_a_dataset_of_people_needs_a_public_bound(dataset, capsys, monkeypatch):
    argv = ["release", "--dataset", "visits", "--method", "ug", BBOX, "--epsilon", "1"]
    code, _, err = run(capsys, monkeypatch, argv)
    assert code == 2 and "--max-points-per-person" in err
    assert Registry().spent("visits") == (0.0, 0.0)
