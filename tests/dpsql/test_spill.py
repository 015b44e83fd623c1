"""Spilling (issue 22): by default DuckDB's memory limit is hard and nothing private is written
to disk; with a spill directory the owner chose, what does not fit goes to a private (0700)
subdirectory that is removed with the engine, and the same query then finishes with the same
release."""

from __future__ import annotations

import gc
import os
import stat

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.limits import ExecutionStopped
from core.dpsql.service import prepare, run
from core.privacy import Accountant, Cost, Noise

SPREAD = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2) "
    "dept, ANON_COUNT(*, 5) AS c FROM t GROUP BY dept"
)


@pytest.fixture(scope="module")
def spread():
    """200,000 units spread over ~8 of 2,000 departments: the C_u sampling sorts 1.6M pairs,
    more than 64 MB holds."""
    rng = np.random.default_rng(0)
    rows = 1_600_000
    return pd.DataFrame(
        {"uid": rng.integers(0, 200_000, rows), "dept": rng.integers(0, 2_000, rows)}
    )


def _release(frame, **engine):
    catalog = Catalog()
    catalog.add_private("t", frame, "uid")
    prepared = prepare(SPREAD, catalog, Noise.seeded(3))
    eng = Engine(catalog, threads=1, timeout_s=300, **engine)
    try:
        return run(prepared, eng, Accountant(Noise.seeded(3), Cost(1.0, 1e-5))), eng
    finally:
        eng.close()


def test_hard_limit_stops_spilling_finishes_with_the_same_release(spread, tmp_path):
    with pytest.raises(ExecutionStopped, match="DPX-E005"):
        _release(spread, memory_limit="64MB")
    spilled, engine = _release(spread, memory_limit="64MB", spill_directory=str(tmp_path))
    roomy, _ = _release(spread, memory_limit="2GB")
    assert spilled.table.equals(roomy.table)  # same seed: the same release, spilled or not
    private = engine._spill.name
    assert os.path.dirname(private) == str(tmp_path)
    del engine
    gc.collect()
    assert not os.path.exists(private)  # removed with the engine


def test_the_spill_directory_is_private(tmp_path):
    catalog = Catalog()
    catalog.add_private("t", pd.DataFrame({"uid": [1], "dept": [1]}), "uid")
    engine = Engine(catalog, spill_directory=str(tmp_path / "new"))
    mode = os.stat(engine._spill.name).st_mode
    assert stat.S_IMODE(mode) == 0o700
    setting = engine.con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
    assert setting == engine._spill.name
    engine.close()


def test_cli_flags(tmp_path, capsys, monkeypatch, registry_dir):
    path = tmp_path / "t.csv"
    pd.DataFrame({"uid": range(40), "dept": [1, 2] * 20}).to_csv(path, index=False)
    base = ["sql", "--table", f"t={path}", "--uid", "uid", "--query", SPREAD, "--json"]
    assert main([*base, "--memory-limit", "256MB", "--spill-dir", str(tmp_path / "s")]) == 0
    capsys.readouterr()
    for bad in ("lots", "10KB", "1e3GB"):
        assert main([*base, "--memory-limit", bad]) == 2
        err = capsys.readouterr().err
        assert "DPX-S008" in err and len(err.strip().splitlines()) == 1
    assert main(["dataset", "add", "d", "--table", f"t={path}", "--uid", "uid",
                 "--epsilon", "5", "--delta", "1e-4"]) == 0  # fmt: skip
    capsys.readouterr()
    monkeypatch.setenv("DPX_MODE", "analyst")
    query = ["sql", "--dataset", "d", "--query", SPREAD]
    assert main([*query, "--spill-dir", str(tmp_path / "s")]) == 2
    assert "for the data owner" in capsys.readouterr().err
    assert main([*query, "--memory-limit", "512MB"]) == 2  # the owner's (issue 27)
    assert "data owner's" in capsys.readouterr().err
    assert main(query) == 0


def test_a_killed_run_s_spill_directory_is_removed_by_the_next_run(tmp_path):
    """A process killed mid-query cannot clean up; the next engine spilling there does."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead = tmp_path / f"dpx-spill-{done.stdout.strip()}-abc"
    dead.mkdir()
    (dead / "block.tmp").write_bytes(b"private")
    mine = tmp_path / f"dpx-spill-{os.getpid()}-keep"
    mine.mkdir()
    catalog = Catalog()
    catalog.add_private("t", pd.DataFrame({"uid": [1], "dept": [1]}), "uid")
    engine = Engine(catalog, spill_directory=str(tmp_path))
    assert not dead.exists() and mine.exists()  # a live process's directory is left alone
    engine.close()


def test_a_full_spill_disk_is_not_called_out_of_memory(spread, tmp_path):
    """Issue 29: the spill directory on a disk that fills up (a 2 MB tmpfs) is said to be a full
    disk (free space or spill elsewhere), not 'ran out of memory ... give --spill-dir' when it
    was given."""
    from tests.faults.conftest import tmpfs

    with tmpfs(tmp_path / "small", "2M") as small, pytest.raises(ExecutionStopped) as err:
        _release(spread, memory_limit="64MB", spill_directory=str(small))
    text = str(err.value)
    assert "disk holding the spill directory" in text and "is full" in text
    assert "ran out of memory" not in text and "Fix: free space" in text


def test_an_io_error_for_a_full_spill_disk_is_said_so(tmp_path):
    """DuckDB may also say ENOSPC as an IOException (a write of its temporary file)."""
    import duckdb

    catalog = Catalog()
    catalog.add_private("t", pd.DataFrame({"uid": [1], "dept": [1]}), "uid")
    engine = Engine(catalog, spill_directory=str(tmp_path))

    class Full:
        def execute(self, sql):
            raise duckdb.IOException('IO Error: Could not write file "x.block": No space left on '
                                     "device")  # fmt: skip

        def interrupt(self):
            pass

    real, engine.con = engine.con, type("Con", (), {"cursor": lambda self: Full()})()
    try:
        with pytest.raises(ExecutionStopped, match="spill directory .* is full"):
            engine.fetch("SELECT 1")
    finally:
        engine.con = real
        engine.close()
