"""`dpx dataset restore` leaves a trace (issue 27 item 5): backup, two releases of epsilon 1,
restore — before, spent went 2 -> 0 with no record. Now `--force` alone refuses (exit 2, one
line naming the dataset and the budget it would get back, nothing changed); with
`--allow-spend-decrease` the restore happens and `dataset show` lists it."""

from __future__ import annotations

import hashlib
import json

import pytest

from core.cli import main
from core.privacy import Cost
from core.registry import Registry


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def setup(capsys, tmp_path):
    """A registered dataset, a backup of it, then two releases of epsilon 1."""
    table = tmp_path / "stops.csv"
    table.write_text("stop_id,race\n1,a\n2,b\n")
    reg = str(tmp_path / "r")
    code, _, err = run(
        capsys,
        ["dataset", "add", "stops", "--table", f"s={table}", "--uid", "stop_id", "--epsilon",
         "5", "--registry", reg],
    )  # fmt: skip
    assert code == 0, err
    backup = tmp_path / "b.sqlite"
    assert run(capsys, ["dataset", "backup", "--out", str(backup), "--registry", reg])[0] == 0
    registry = Registry(reg)
    for _ in range(2):
        registry.charge("sql", "stops", {}, Cost(1.0), "secure")
    registry.close()
    return reg, backup


def test_force_alone_refuses_to_give_budget_back(capsys, setup):
    reg, backup = setup
    code, _, err = run(capsys, ["dataset", "restore", str(backup), "--registry", reg])
    assert code == 2 and "add --force" in err  # the old guard still speaks first
    code, out, err = run(capsys, ["dataset", "restore", str(backup), "--force", "--registry", reg])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "'stops' gets epsilon 2, delta 0 back" in err and "--allow-spend-decrease" in err
    assert "Fix:" in err
    assert Registry(reg).spent("stops") == (2.0, 0.0)
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--json", "--registry", reg])
    assert json.loads(out)["epsilon_spent"] == 2 and json.loads(out)["budget_history"] == []


def test_an_allowed_restore_is_listed_by_show(capsys, setup, monkeypatch):
    reg, backup = setup
    code, out, err = run(
        capsys,
        ["dataset", "restore", str(backup), "--force", "--allow-spend-decrease", "--json",
         "--registry", reg],
    )  # fmt: skip
    assert code == 0, err
    done = json.loads(out)
    sha = hashlib.sha256(backup.read_bytes()).hexdigest()
    assert done["backup_sha256"] == sha
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--json", "--registry", reg])
    info = json.loads(out)
    assert info["epsilon_spent"] == 0
    (entry,) = info["budget_history"]
    assert entry["kind"] == "restore" and entry["backup"] == "b.sqlite"
    assert entry["backup_sha256"] == sha and entry["time"]
    assert entry["spent_before"] == [2.0, 0.0] and entry["spent_after"] == [0.0, 0.0]
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--registry", reg])
    assert "RESTORE from b.sqlite" in out
    assert "spent epsilon 2, delta 0 -> epsilon 0, delta 0" in out
    monkeypatch.setenv("DPX_MODE", "analyst")  # an analyst sees the restore, not the file
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--json", "--registry", reg])
    (entry,) = json.loads(out)["budget_history"]
    assert entry["spent_before"] == [2.0, 0.0] and "sha256" not in out and "b.sqlite" not in out
