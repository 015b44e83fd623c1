"""The registry under damage and full disks, seen from the CLI (issue 17 items 1 and 5):
a corrupted or zero-length registry is refused with one line and left untouched; a registry on
a tiny full file system gives one line (exit 2) or a complete success, and afterwards passes the
integrity check with spend = the sum of its releases' charges and no partial output."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.registry.store import FILE_NAME
from tests.faults.conftest import (
    BBOX,
    SQL_QUERY,
    assert_one_error_line,
    fill_up,
    run_dpx,
    temporaries,
    tmpfs,
    write_people,
)
from tests.faults.invariants import charge_covers


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def registered(tmp_path, monkeypatch):
    """A registry with dataset `d` (one table) and a few releases; DPX_REGISTRY points at it."""
    directory = tmp_path / "reg"
    monkeypatch.setenv("DPX_REGISTRY", str(directory))
    people = write_people(tmp_path / "people.csv")
    assert main(["dataset", "add", "d", "--table", f"t={people}", "--uid", "uid",
                 "--epsilon", "100", "--delta", "0.5"]) == 0  # fmt: skip
    for _ in range(12):
        assert (
            main(
                [
                    "htf",
                    "--dataset",
                    "d",
                    "--max-points-per-person",
                    "1",
                    BBOX,
                    "--epsilon",
                    "0.5",
                    "--json",
                ]
            )
            == 0
        )
    return directory


def commands(tmp_path: Path) -> list[list[str]]:
    """Every subcommand that opens the registry."""
    return [
        ["dataset", "list"],
        ["dataset", "show", "d"],
        [
            "dataset",
            "add",
            "e",
            "--table",
            f"t={tmp_path / 'people.csv'}",
            "--uid",
            "uid",
            "--epsilon",
            "1",
        ],
        ["dataset", "budget", "d", "--epsilon", "200"],
        ["dataset", "backup", "--out", str(tmp_path / "backup.sqlite")],
        ["report", "1", "--out", str(tmp_path / "r.html")],
        [
            "htf",
            "--dataset",
            "d",
            "--max-points-per-person",
            "1",
            BBOX,
            "--epsilon",
            "0.5",
            "--out",
            str(tmp_path / "h.csv"),
        ],
        [
            "release",
            "--dataset",
            "d",
            "--max-points-per-person",
            "1",
            BBOX,
            "--method",
            "ug",
            "--epsilon",
            "0.5",
        ],
        ["sql", "--dataset", "d", "--query", SQL_QUERY.format(eps=0.5)],
        ["balance", "--dataset", "d", "--sa", "sa", "--rho1", "1/3", "--rho2", "2/3"],
    ]


def _damage(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8192] = np.random.default_rng(5).bytes(8192)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["random bytes in the middle", "zero length"])
def test_a_damaged_registry_is_refused_by_every_command_and_left_untouched(
    registered, tmp_path, capsys, damage
):
    path = registered / FILE_NAME
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    if damage == "zero length":
        path.write_bytes(b"")
    else:
        assert path.stat().st_size > 20_000
        _damage(path)
    before = digest(path)
    capsys.readouterr()
    for argv in commands(tmp_path):
        code = main(argv)
        out = capsys.readouterr()
        assert code == 2, (argv, out)
        assert_one_error_line(out.err, " ".join(argv))
        assert "restore" in out.err and out.out == ""
        assert digest(path) == before, argv
    assert not (tmp_path / "backup.sqlite").exists() and not (tmp_path / "h.csv").exists()
    assert temporaries(tmp_path) == []


def test_a_damaged_registry_in_a_child_process_prints_no_traceback(registered, tmp_path):
    path = registered / FILE_NAME
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    _damage(path)
    done = run_dpx("dataset", "show", "d", env={"DPX_REGISTRY": str(registered)})
    assert done.returncode == 2
    assert_one_error_line(done.stderr, "dataset show")


# -- a registry on a tiny full file system -----------------------------------------------------


def _invariants(registry: Path) -> None:
    """Integrity check passes; spend of `d` = the sum of its releases' charges, each charge
    covering the mechanisms that drew."""
    con = sqlite3.connect(registry / FILE_NAME)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = con.execute(
            "SELECT epsilon, mechanisms, status FROM releases WHERE dataset='d' AND kind='release'"
        ).fetchall()
    finally:
        con.close()
    for epsilon, mechanisms, status in rows:
        assert status in ("charged", "released", "failed", "undelivered"), status
        charge_covers(epsilon, mechanisms)
    from core.registry.registry import Registry

    reg = Registry(registry)
    try:
        assert abs(reg.spent("d")[0] - sum(r[0] for r in rows)) < 1e-9
        assert reg.spent("d")[0] <= 100 + 1e-9
    finally:
        reg.close()


def _complete(out: Path, companion: Path) -> None:
    """A successful run's output: the primary and its companion, both whole."""
    assert out.exists() and companion.exists()
    frame = pd.read_csv(out)
    meta = json.loads(companion.read_text())
    if "n_leaves" in meta:
        assert len(frame) == meta["n_leaves"]
    elif meta.get("rows") == "plan slots":  # PP with the SA only: one row per planned slot
        assert len(frame) == sum(s["size"] for s in meta["subtables"])
    else:
        assert len(frame) == 400


@pytest.fixture
def tiny(tmp_path):
    """A 2 MB tmpfs holding the registry (dataset `d`, 100 ε) and the outputs; the table lives
    outside it. Yields (mount, registry, pristine copy of the registry)."""
    people = write_people(tmp_path / "people.csv")
    with tmpfs(tmp_path / "tiny", "2m") as mount:
        registry = mount / "reg"
        env = {"DPX_REGISTRY": str(registry)}
        done = run_dpx("dataset", "add", "d", "--table", f"t={people}", "--uid", "uid",
                       "--epsilon", "100", "--delta", "0.5", env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        con = sqlite3.connect(registry / FILE_NAME)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        pristine = tmp_path / "pristine"
        shutil.copytree(registry, pristine)
        yield mount, registry, pristine


def _leave_free(mount: Path, kilobytes: int) -> Path:
    filler = fill_up(mount)
    os.truncate(filler, max(0, filler.stat().st_size - kilobytes * 1024))
    return filler


FULL_DISK_RUNS = {
    "htf": (
        ["htf", "--dataset", "d", "--max-points-per-person", "1", BBOX, "--epsilon", "0.5"],
        "h.csv",
        "h.csv.json",
    ),
    "release": (
        [
            "release",
            "--dataset",
            "d",
            "--max-points-per-person",
            "1",
            BBOX,
            "--method",
            "quadtree",
            "--epsilon",
            "0.5",
        ],
        "r.csv",
        "r.csv.json",
    ),
    "balance": (
        ["balance", "--dataset", "d", "--sa", "sa", "--rho1", "1/3", "--rho2", "2/3", "--perturb"],
        "p.csv",
        "p.metadata.json",
    ),
    "sql": (["sql", "--dataset", "d", "--query", SQL_QUERY.format(eps=0.5)], None, None),
}


@pytest.mark.parametrize("tool", list(FULL_DISK_RUNS))
def test_a_full_file_system_gives_one_line_or_success_and_nothing_partial(tiny, tool):
    """Free space swept from 0 upwards (16 KB steps) so that every step of a governed run —
    opening, charging, writing the output, attaching — meets the full disk at some size."""
    mount, registry, pristine = tiny
    argv, out_name, companion_name = FULL_DISK_RUNS[tool]
    outcomes = []
    for kilobytes in range(0, 129, 16):
        shutil.rmtree(registry)
        shutil.copytree(pristine, registry)
        outdir = mount / "out"
        shutil.rmtree(outdir, ignore_errors=True)
        outdir.mkdir()
        extra = ["--out", str(outdir / out_name)] if out_name else []
        filler = _leave_free(mount, kilobytes)
        done = run_dpx(*argv, *extra, "--json", env={"DPX_REGISTRY": str(registry)})
        filler.unlink()
        outcomes.append(done.returncode)
        context = f"{tool} with {kilobytes} KB free"
        assert done.returncode in (0, 2), (context, done.stderr)
        if done.returncode == 2:
            assert_one_error_line(done.stderr, context)
            assert done.stdout == ""
            if out_name and (outdir / out_name).exists():  # written, then attaching failed
                _complete(outdir / out_name, outdir / companion_name)  # never partial
        elif out_name:
            _complete(outdir / out_name, outdir / companion_name)
        assert temporaries(mount) == [], context
        _invariants(registry)
    assert 2 in outcomes and 0 in outcomes  # the sweep crossed from full to enough space


def test_dataset_commands_on_a_full_file_system(tiny, tmp_path):
    mount, registry, _ = tiny
    env = {"DPX_REGISTRY": str(registry)}
    filler = _leave_free(mount, 0)
    try:
        for argv in (
            [
                "dataset",
                "add",
                "e",
                "--table",
                f"t={tmp_path / 'people.csv'}",
                "--uid",
                "uid",
                "--epsilon",
                "1",
            ],
            ["dataset", "budget", "d", "--epsilon", "200"],
            ["dataset", "backup", "--out", str(mount / "b.sqlite")],
        ):
            done = run_dpx(*argv, env=env)
            assert done.returncode == 2, (argv, done.stdout)
            assert_one_error_line(done.stderr, " ".join(argv))
    finally:
        filler.unlink()
    assert not (mount / "b.sqlite").exists() and temporaries(mount) == []
    _invariants(registry)


def test_a_failed_attach_leaves_the_release_marked_with_a_reason(registered, capsys, monkeypatch):
    from core.registry.models import Status
    from core.registry.registry import Registry

    def disk_full(*args, **kwargs):  # what Registry.attach raises on a full disk
        from core.registry.dberrors import registry_error

        raise registry_error(sqlite3.OperationalError("database or disk is full"), "registry")

    with monkeypatch.context() as patch:
        patch.setattr(Registry, "attach", disk_full)
        code = main(
            [
                "htf",
                "--dataset",
                "d",
                "--max-points-per-person",
                "1",
                BBOX,
                "--epsilon",
                "0.5",
                "--json",
            ]
        )
    assert code == 2
    assert_one_error_line(capsys.readouterr().err, "attach failed")
    last = Registry(registered).releases("d")[-1]
    assert last.status is not Status.CHARGED and last.note
