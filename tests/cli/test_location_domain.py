"""Issue 27 (item 2, location): a coordinate outside its declared domain is a missing value,
never a refusal. An attacker's test: two neighbouring files that differ in one row only — a
row whose longitude is 181, 'abc', NaN, -inf, or whose latitude is 91 — must have the same
outcome (both released, the same charge) in every role, and with the same seed the very same
release. Refusing the neighbour after the charge would both spend ε for nothing and tell the
analyst that such a row exists."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.registry import Registry
from tests.cli.conftest import run_dpx

BBOX = "--bbox=-118.5,33.7,-117.9,34.3"
ROW = 150  # where the neighbour's extra row sits (inside a person's run of points)
BAD = [("lon", "181"), ("lon", "abc"), ("lon", "nan"), ("lon", "-inf"), ("lat", "91")]


def _base(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        {
            "person": rng.integers(0, 80, n).astype(str),
            "lat": (34.0 + rng.normal(0, 0.05, n)).round(6).astype(object),
            "lon": (-118.2 + rng.normal(0, 0.05, n)).round(6).astype(object),
        }
    )


def _neighbour(base: pd.DataFrame, column: str, value: str) -> pd.DataFrame:
    row = {"person": base.loc[ROW, "person"], "lat": 34.0, "lon": -118.2, column: value}
    top, bottom = base.iloc[:ROW], base.iloc[ROW:]
    return pd.concat([top, pd.DataFrame([row]), bottom], ignore_index=True)


@pytest.fixture(params=BAD, ids=[f"{c}={v}" for c, v in BAD])
def files(request, tmp_path, registry_dir, capsys):
    """The two neighbouring files, each registered as a dataset of people ('d' and 'd_prime')."""
    column, value = request.param
    base = _base()
    paths = {}
    for name, frame in (("d", base), ("d_prime", _neighbour(base, column, value))):
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
        argv = ["dataset", "add", name, "--table", f"t={paths[name]}", "--uid", "person",
                "--epsilon", "10"]  # fmt: skip
        assert main(argv) == 0
    capsys.readouterr()
    return paths


COMMANDS = {
    "release": ["release", "--method", "ug", BBOX, "--grid", "64", "--epsilon", "1",
                "--max-points-per-person", "3", "--json"],
    "htf": ["htf", BBOX, "--grid", "64", "--epsilon", "1", "--max-points-per-person", "3",
            "--json"],
    "plan release": ["plan", "release", BBOX, "--grid", "64", "--max-points-per-person", "3",
                     "--method", "ug", "--target-mre", "0.3", "--pilot-epsilon", "0.5", "--json"],
}  # fmt: skip


@pytest.mark.parametrize("role", ["owner", "analyst"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_neighbours_differing_in_one_unusable_row_have_the_same_outcome_and_charge(
    files, capsys, monkeypatch, role, command
):
    outcomes = {}
    for name in files:
        argv = [*COMMANDS[command], "--dataset", name]
        code, out, err = run_dpx(capsys, monkeypatch, argv, role)
        assert "Traceback" not in err
        outcomes[name] = (
            code,
            Registry().spent(name),
            [r.status for r in Registry().releases(name)],
        )
        assert code == 0, err  # released: no refusal for one private value
        if role == "analyst":  # no count of dropped rows (a private fact) reaches an analyst
            assert "dropped" not in out + err and "n_points" not in out
    assert outcomes["d"] == outcomes["d_prime"]
    charged = 0.5 if command == "plan release" else 1.0
    assert outcomes["d"][1] == (pytest.approx(charged), 0.0)


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_same_seed_same_release_on_neighbouring_files(files, capsys, monkeypatch, tmp_path, kind):
    """Owner, files given directly, seeded: the neighbour's release is the base's, leaf for leaf
    (the unusable row is dropped before the per-person bound draws, so nothing shifts)."""
    releases = []
    for name, path in files.items():
        if kind == "parquet":
            frame = pd.read_csv(path, dtype=str)
            path = tmp_path / f"{name}.parquet"
            frame.to_parquet(path, index=False)
        argv = ["release", str(path), "--method", "ug", BBOX, "--grid", "64", "--epsilon", "1",
                "--uid", "person", "--max-points-per-person", "3", "--seed", "7",
                "--json"]  # fmt: skip
        code, out, err = run_dpx(capsys, monkeypatch, argv, "owner")
        assert code == 0, err
        result = json.loads(out)
        releases.append((result["leaves"], result["n_points_used"]))
        dropped = result["n_points_dropped"]
    assert releases[0] == releases[1]
    assert dropped >= 1  # the owner's labelled count includes the unusable row


def test_the_owner_text_labels_the_dropped_count_as_private(files, capsys, monkeypatch):
    argv = [*COMMANDS["release"][:-1], "--dataset", "d_prime"]
    code, out, err = run_dpx(capsys, monkeypatch, argv, "owner")
    assert code == 0, err
    assert "dropped" in out and "data owner, only" in out


@pytest.mark.parametrize("command", ["release", "plan release"])
def test_analyst_outcome_does_not_depend_on_one_point_at_the_owners_minimum(
    tmp_path, registry_dir, capsys, monkeypatch, command
):
    """The owner's run refuses a bbox holding fewer than 10 points (exact counts, for the
    owner); an analyst's neighbouring datasets with 10 and 9 points inside are both released,
    with the same charge: no refusal after the charge depends on one private row."""
    rng = np.random.default_rng(2)
    inside = pd.DataFrame({"person": [f"p{i}" for i in range(10)],
                           "lat": 34.0 + rng.uniform(-0.1, 0.1, 10),
                           "lon": -118.2 + rng.uniform(-0.1, 0.1, 10)})  # fmt: skip
    outside = pd.DataFrame({"person": ["q"] * 50, "lat": 10.0 + rng.uniform(0, 1, 50),
                            "lon": 20.0 + rng.uniform(0, 1, 50)})  # fmt: skip
    tables = {"ten": pd.concat([inside, outside]), "nine": pd.concat([inside.iloc[1:], outside])}
    for name, frame in tables.items():
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        assert main(["dataset", "add", name, "--table", f"t={path}", "--uid", "person",
                     "--epsilon", "10"]) == 0  # fmt: skip
    capsys.readouterr()
    spent = {}
    for name in tables:
        argv = [*COMMANDS[command], "--dataset", name]
        code, out, err = run_dpx(capsys, monkeypatch, argv, "analyst")
        assert code == 0, err
        spent[name] = Registry().spent(name)
    assert spent["ten"] == spent["nine"]
    # the owner's exact view still refuses the neighbour with 9 points inside (owner only)
    code, _, err = run_dpx(capsys, monkeypatch, [*COMMANDS["release"], "--dataset", "nine"],
                           "owner")  # fmt: skip
    assert code == 2 and "at least 10" in err
