"""kill -9 at random points of each governed command (issue 17 item 5).

For `dpx sql/release/htf/balance --dataset` (with `--out` where the tool has one), ten kills per
command at fixed-seed points: half at a random fraction of a measured complete run, half just
after the command starts writing into the output directory (the write window). After every kill
no partial output file exists (a primary file is whole and has its companion); after the next
complete run no temporary file remains; the registry passes `PRAGMA integrity_check` and each
dataset's spend is the sum of its releases' charges, each charge covering the mechanisms that
drew."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.registry.store import FILE_NAME
from tests.faults.conftest import BBOX, SQL_QUERY, dpx_command, run_dpx, temporaries
from tests.faults.invariants import charge_covers

ROWS = 60_000  # big enough that writing the published table takes a noticeable time
EPSILON = 0.01
KILLS = 10


@pytest.fixture(scope="module")
def big_csv(tmp_path_factory) -> Path:
    rng = np.random.default_rng(11)
    path = tmp_path_factory.mktemp("kill-data") / "big.csv"
    pd.DataFrame(
        {
            "uid": np.arange(ROWS),
            "lat": 34.0 + rng.normal(0, 0.05, ROWS),
            "lon": -118.2 + rng.normal(0, 0.05, ROWS),
            "sa": rng.choice(["a", "b", "c", "d"], ROWS, p=[0.4, 0.3, 0.2, 0.1]),
            "note": ["free text that makes the published rows longer"] * ROWS,
        }
    ).to_csv(path, index=False)
    return path


GRID = ["--grid", "256"]  # releases with many leaves: the output takes time to write
COMMANDS = {
    "sql": (["sql", "--dataset", "big", "--query", SQL_QUERY.format(eps=EPSILON)], None, None),
    "release": (
        ["release", "--dataset", "big", "--max-points-per-person", "1", BBOX, *GRID, "--method", "identity",
         "--epsilon", str(EPSILON)],
        "r.csv",
        "r.csv.json",
    ),
    "htf": (
        ["htf", "--dataset", "big", "--max-points-per-person", "1", BBOX, *GRID, "--epsilon", "5", "--stop-count", "1",
         "--stop-cells", "1"],
        "h.csv",
        "h.csv.json",
    ),
    "balance": (
        ["balance", "--dataset", "big", "--sa", "sa", "--rho1", "1/3", "--rho2", "2/3", "--perturb"],
        "p.csv",
        "p.metadata.json",
    ),
}  # fmt: skip
SEEDS = {"sql": 101, "release": 102, "htf": 103, "balance": 104}


def _snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    try:
        return {e.name: (e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(directory)}
    except FileNotFoundError:
        return {}


def _kill_at(argv: list[str], env: dict, delay: float | None, watch: Path | None, extra: float):
    """Start `dpx argv`; SIGKILL it after `delay` seconds, or (delay None) `extra` seconds after
    the first change in `watch`. Returns the exit code (-9 if killed)."""
    child = subprocess.Popen(
        dpx_command(*argv),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
        cwd=Path(__file__).resolve().parents[2],
    )
    if delay is not None:
        try:
            child.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
    else:
        before = _snapshot(watch)
        while child.poll() is None:
            if _snapshot(watch) != before:
                time.sleep(extra)
                child.send_signal(signal.SIGKILL)
                break
            time.sleep(0.0005)
    return child.wait(timeout=600)


def _whole(out: Path, companion: Path) -> None:
    """A primary output exists only whole and with its companion."""
    assert companion.exists(), f"{out.name} without {companion.name}"
    frame = pd.read_csv(out)
    meta = json.loads(companion.read_text())
    expected = meta.get("n_leaves", ROWS)
    if meta.get("rows") == "plan slots":  # PP with the SA only: one row per planned slot
        expected = sum(s["size"] for s in meta["subtables"])
    assert len(frame) == expected, f"{out.name}: {len(frame)} rows, expected {expected}"


def _registry_invariants(registry: Path, runs: int, succeeded: int) -> None:
    con = sqlite3.connect(registry / FILE_NAME)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = con.execute(
            "SELECT epsilon, mechanisms, status, kind FROM releases WHERE dataset='big'"
        ).fetchall()
        total = con.execute("SELECT epsilon_total FROM datasets WHERE name='big'").fetchone()[0]
    finally:
        con.close()
    assert len(rows) <= runs
    assert sum(1 for r in rows if r[2] == "released") >= succeeded
    for epsilon, mechanisms, _, kind in rows:
        assert kind == "release"
        charge_covers(epsilon, mechanisms)
    from core.registry.registry import Registry

    reg = Registry(registry)
    try:
        spent = reg.spent("big")[0]
    finally:
        reg.close()
    assert abs(spent - sum(r[0] for r in rows)) < 1e-9 and spent <= total


@pytest.mark.parametrize("tool", list(COMMANDS))
def test_kill_9_at_random_points_leaves_no_partial_file_and_a_sound_registry(
    tool, big_csv, tmp_path
):
    registry = tmp_path / "reg"
    env = {"DPX_REGISTRY": str(registry), "DPX_DEBUG": "1"}
    added = run_dpx("dataset", "add", "big", "--table", f"t={big_csv}", "--uid", "uid",
                    "--epsilon", "1000", "--delta", "0.5", env=env)  # fmt: skip
    assert added.returncode == 0, added.stderr
    argv, out_name, companion_name = COMMANDS[tool]
    outdir = tmp_path / "out"
    outdir.mkdir()
    if out_name:
        argv = [*argv, "--out", str(outdir / out_name)]

    started = time.monotonic()
    first = run_dpx(*argv, env=env)
    duration = time.monotonic() - started
    assert first.returncode == 0, first.stderr
    runs, succeeded = 1, 1

    rng = np.random.default_rng(SEEDS[tool])
    for i in range(KILLS):
        by_file = out_name is not None and i % 2 == 1
        delay = None if by_file else float(rng.uniform(0.05, 1.0)) * duration
        # after the first change in the output directory: at once (small files are written
        # within a millisecond) or a little later (the published table takes longer)
        extra = float(rng.uniform(0.0, 0.002 if i % 4 == 1 else 0.03))
        if out_name:  # a fresh start: a primary without its companion shows at once
            (outdir / out_name).unlink(missing_ok=True)
            (outdir / companion_name).unlink(missing_ok=True)
        code = _kill_at(argv, env, delay, outdir if by_file else None, extra)
        runs += 1
        succeeded += code == 0
        assert code in (0, -signal.SIGKILL), code
        if out_name and (outdir / out_name).exists():
            _whole(outdir / out_name, outdir / companion_name)

    final = run_dpx(*argv, env=env)
    assert final.returncode == 0, final.stderr
    runs, succeeded = runs + 1, succeeded + 1
    assert temporaries(outdir) == [], "temporary files left after the next complete run"
    if out_name:
        _whole(outdir / out_name, outdir / companion_name)
    _registry_invariants(registry, runs, succeeded)
