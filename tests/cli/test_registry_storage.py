"""`dpx registry info|prune` (issue 29, item 6): the registry states its size and the stored
artefacts by kind; a seeded `dpx release` keeps only its record (the owner still gets its
result); prune drops old unregistered bodies only; bad input is one line and exit 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.registry import Registry, RunKind
from tests.cli.conftest import run_dpx

BBOX = "--bbox=2.2,48.7,2.5,49.0"


@pytest.fixture
def points(tmp_path):
    rng = np.random.default_rng(2)
    path = tmp_path / "p.csv"
    pd.DataFrame(
        {"lat": 48.85 + rng.normal(0, 0.03, 500), "lon": 2.35 + rng.normal(0, 0.03, 500)}
    ).to_csv(path, index=False)
    return path


def release(capsys, monkeypatch, points, *extra):
    argv = ["release", str(points), BBOX, "--grid", "32", "--epsilon", "1", "--method", "hb",
            "--json", *extra]  # fmt: skip
    code, out, err = run_dpx(capsys, monkeypatch, argv, "owner")
    assert code == 0, err
    return json.loads(out)


def info(capsys, monkeypatch) -> dict:
    code, out, err = run_dpx(capsys, monkeypatch, ["registry", "info", "--json"], "owner")
    assert code == 0, err
    return {k["kind"]: k for k in json.loads(out)["kinds"]}


def test_a_seeded_release_keeps_its_record_and_prune_drops_old_bodies(
    registry_dir, points, capsys, monkeypatch
):
    seeded = release(capsys, monkeypatch, points, "--seed", "3")
    assert seeded["mode"] == "seeded"  # the owner's result comes from the computation
    release(capsys, monkeypatch, points)  # secure, unregistered: kept
    kinds = info(capsys, monkeypatch)
    assert (kinds["demo"]["runs"], kinds["demo"]["bodies"], kinds["demo"]["not_kept"]) == (1, 0, 1)
    assert kinds["unregistered"]["bodies"] == 1
    assert 0 < kinds["unregistered"]["stored_bytes"] < kinds["unregistered"]["json_bytes"]
    reg = Registry(registry_dir)
    demo = next(r for r in reg.releases() if r.kind is RunKind.DEMO)
    assert demo.artefact is None and demo.artefact_sha256 and demo.mechanisms
    out = registry_dir.parent / "demo.html"
    code, _, err = run_dpx(
        capsys, monkeypatch, ["report", str(demo.id), "--out", str(out)], "owner"
    )
    assert code == 0, err
    assert "not kept: demo run" in out.read_text()
    code, text, err = run_dpx(
        capsys, monkeypatch, ["registry", "prune", "--older-than", "7d"], "owner"
    )
    assert code == 0, err
    assert "of 0 demo/unregistered run(s)" in text  # nothing that old
    code, text, err = run_dpx(
        capsys, monkeypatch, ["registry", "prune", "--older-than", "0s", "--json"], "owner"
    )
    assert code == 0, err
    assert len(json.loads(text)["runs"]) == 1
    kinds = info(capsys, monkeypatch)
    assert kinds["unregistered"]["bodies"] == 0 and kinds["unregistered"]["runs"] == 1


@pytest.mark.parametrize("age", ["7x", "soon", "-3d"])
def test_a_bad_age_is_one_line_and_exit_2(registry_dir, capsys, monkeypatch, age):
    code, out, err = run_dpx(
        capsys, monkeypatch, ["registry", "prune", f"--older-than={age}"], "owner"
    )
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Fix: e.g. --older-than 7d" in err
    assert "Traceback" not in err


def test_an_analyst_may_not_prune(registry_dir, capsys, monkeypatch):
    code, _, err = run_dpx(
        capsys, monkeypatch, ["registry", "prune", "--older-than", "7d"], "analyst"
    )
    assert code == 2 and err.count("\n") == 1
