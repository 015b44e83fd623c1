"""`dpx dataset`: registration states the unit, the owner's PP policy, stranded charges, and the
analyst role (no registration or budget commands; no paths or hashes of raw bytes)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.cli import main
from core.privacy import Cost
from core.registry import Registry, Status


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "stops.csv"
    path.write_text("stop_id,race,precinct\n1,a,4\n2,b,5\n3,a,4\n")
    return path


def run(capsys, argv, env=None, monkeypatch=None):
    if monkeypatch is not None:
        for k, v in (env or {}).items():
            monkeypatch.setenv(k, v)
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def add(capsys, reg, table, *extra):
    return run(
        capsys,
        ["dataset", "add", "stops", "--table", f"s={table}", "--epsilon", "5",
         "--registry", str(reg), *extra],
    )  # fmt: skip


def test_registration_must_state_the_unit(capsys, tmp_path, table):
    code, out, err = add(capsys, tmp_path / "r", table)
    assert code == 2 and err.count("\n") == 1 and "--uid" in err and "--row-is-unit" in err
    assert not (tmp_path / "r").exists() or Registry(tmp_path / "r").datasets() == []


def test_a_unit_column_missing_from_a_table_is_refused(capsys, tmp_path, table):
    code, _, err = add(capsys, tmp_path / "r", table, "--uid", "person")
    assert code == 2 and "unit column 'person' is not in table 's'" in err
    assert Registry(tmp_path / "r").datasets() == []


def test_row_is_unit_is_recorded_and_said(capsys, tmp_path, table):
    code, out, _ = add(capsys, tmp_path / "r", table, "--row-is-unit")
    assert code == 0 and "a row id is added" in out
    d = Registry(tmp_path / "r").dataset("stops")
    assert d.row_is_unit and d.uid is None and d.unit_words.startswith("one row")


def test_pp_columns_are_the_owners_decision(capsys, tmp_path, table, monkeypatch):
    reg = tmp_path / "r"
    code, _, err = add(capsys, reg, table, "--uid", "stop_id", "--pp-columns", "stop_id")
    assert code == 2 and "never be published" in err
    code, _, err = add(capsys, reg, table, "--uid", "stop_id", "--pp-columns", "nope")
    assert code == 2 and "nope" in err
    assert add(capsys, reg, table, "--uid", "stop_id", "--pp-columns", "precinct")[0] == 0
    assert Registry(reg).dataset("stops").publishable == ("precinct",)
    code, out, _ = run(
        capsys, ["dataset", "policy", "stops", "--pp-columns", "", "--registry", str(reg)]
    )
    assert code == 0 and "none" in out and Registry(reg).dataset("stops").publishable == ()


def test_analyst_cannot_register_or_change_budgets_and_sees_no_hashes(
    capsys, tmp_path, table, monkeypatch
):
    reg = tmp_path / "r"
    assert add(capsys, reg, table, "--uid", "stop_id")[0] == 0
    monkeypatch.setenv("DPX_MODE", "analyst")
    for argv in (
        ["dataset", "add", "x", "--table", f"s={table}", "--uid", "stop_id", "--epsilon", "1"],
        ["dataset", "budget", "stops", "--epsilon", "9"],
        ["dataset", "policy", "stops", "--pp-columns", "race"],
        ["dataset", "reconcile"],
    ):
        code, out, err = run(capsys, [*argv, "--registry", str(reg)])
        assert code == 2 and out == "" and err.count("\n") == 1 and "data owner" in err
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--json", "--registry", str(reg)])
    shown = json.loads(out)
    assert code == 0 and shown["epsilon_total"] == 5
    assert "sha256" not in out and str(table) not in out


def test_stranded_charges_are_shown_and_reconciled(capsys, tmp_path, table):
    reg_dir = tmp_path / "r"
    assert add(capsys, reg_dir, table, "--uid", "stop_id")[0] == 0
    # a process charges and dies before delivering
    code = (
        "import os; from core.registry import Registry; from core.privacy import Cost\n"
        f"Registry({str(reg_dir)!r}).charge('sql', 'stops', {{}}, Cost(0.5), 'secure')\n"
        "os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=False, timeout=60)
    reg = Registry(reg_dir)
    reg.charge("sql", "stops", {}, Cost(0.25), "secure")  # this process: still running
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--registry", str(reg_dir)])
    assert code == 0 and "never delivered" in out and out.count("never delivered") == 1
    code, out, _ = run(
        capsys, ["dataset", "reconcile", "stops", "--json", "--registry", str(reg_dir)]
    )
    closed = json.loads(out)["closed"]
    assert len(closed) == 1 and closed[0]["epsilon"] == 0.5
    assert reg.release(closed[0]["id"]).status is Status.FAILED
    assert reg.spent("stops") == (0.75, 0.0)
