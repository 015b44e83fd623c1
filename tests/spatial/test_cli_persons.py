"""`--uid COL --max-points-per-person K` on `dpx release` and `dpx htf` (issue 20, Build 1)."""

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main

BBOX = "-118.6,33.7,-117.9,34.4"


@pytest.fixture(scope="module")
def people_csv(tmp_path_factory):
    rng = np.random.default_rng(2)
    n = 4_000
    df = pd.DataFrame(
        {
            "person": [f"p{v}" for v in rng.integers(0, 120, n)],
            "Latitude": np.clip(rng.normal(34.05, 0.05, n), 33.71, 34.39),
            "Longitude": np.clip(rng.normal(-118.25, 0.05, n), -118.59, -117.91),
        }
    )
    path = tmp_path_factory.mktemp("people") / "people.csv"
    df.to_csv(path, index=False)
    return path


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out


COMMON = ["--lat", "Latitude", "--lon", "Longitude", "--bbox", BBOX, "--grid", "64",
          "--epsilon", "1", "--seed", "3"]  # fmt: skip


@pytest.mark.parametrize("command", [["release", "--method", "auto"], ["release", "--method", "ug"],
                                     ["htf"]])  # fmt: skip
def test_person_level_release_states_its_unit_and_scales_sensitivities(people_csv, capsys, command):
    code, out = run(capsys, command[0], str(people_csv), *COMMON, *command[1:],
                    "--uid", "person", "--max-points-per-person", "4", "--json")  # fmt: skip
    assert code == 0, out.err
    res = json.loads(out.out)
    assert res["unit"] == {"kind": "person", "column": "person", "max_points": 4,
                           "text": "each person (at most 4 points; person column 'person')"}  # fmt: skip
    assert "person-level" in res["privacy_unit"]
    assert res["n_points_used"] <= 120 * 4 and res["n_points_over_person_bound"] > 0
    assert all(r["sensitivity"] >= 4 for r in res["mechanisms"])  # K x a point's (>= 1)


def test_text_output_names_the_unit(people_csv, capsys):
    code, out = run(capsys, "release", str(people_csv), *COMMON, "--method", "ug",
                    "--uid", "person", "--max-points-per-person", "4")  # fmt: skip
    assert code == 0 and "privacy unit: one person (column person; at most 4 rows each)" in out.out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--uid", "person"], "needs a bound"),
        (["--max-points-per-person", "3"], "needs the person column"),
        (["--uid", "nobody", "--max-points-per-person", "3"], "person column 'nobody'"),
        (["--uid", "person", "--max-points-per-person", "0"], "whole number in [1,"),
    ],
)
def test_bad_person_arguments_exit_2_with_one_line(people_csv, capsys, extra, message):
    code, out = run(capsys, "release", str(people_csv), *COMMON, "--method", "ug", *extra)
    assert code == 2 and message in out.err and len(out.err.strip().splitlines()) == 1
