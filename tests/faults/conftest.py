"""Shared pieces of the fault suite (issue 17): data files, a `dpx` subprocess runner, the
one-line-error check, FIFOs and a private `/dev/full`, and tmpfs mounts (root only; otherwise
the tests that need one skip LOUDLY, like the Spark and browser tests)."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

BBOX = "--bbox=-118.5,33.7,-117.9,34.3"
SQL_QUERY = (
    "SELECT WITH ANONYMIZATION OPTIONS(epsilon={eps}, delta=1e-6, max_groups_contributed=1) "
    "sa, ANON_COUNT(*, 1) AS n FROM t GROUP BY sa"
)
TEMP_MARK = ".dpx-"  # every temporary of core.files (and the old writers') has this in its name


@pytest.fixture(autouse=True)
def _debug_mode(monkeypatch):
    """Programming errors must surface in these tests (the CLI would hide them as one line)."""
    monkeypatch.setenv("DPX_DEBUG", "1")


def loud_skip(reason: str):
    message = f"!!! FAULT TEST SKIPPED: {reason} !!!"
    print(f"\n{message}", file=sys.stderr)
    pytest.skip(message)


def write_people(path: Path, n: int = 400, seed: int = 7) -> Path:
    """A table with a unit column, points near Los Angeles and a sensitive attribute."""
    rng = np.random.default_rng(seed)
    pd.DataFrame(
        {
            "uid": np.arange(n),
            "lat": 34.0 + rng.normal(0, 0.05, n),
            "lon": -118.2 + rng.normal(0, 0.05, n),
            "sa": rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    ).to_csv(path, index=False)
    return path


DPX = str(Path(sys.executable).parent / "dpx")


def dpx_command(*args: str) -> list[str]:
    return [DPX, *args]


def run_dpx(*args: str, env: dict | None = None, stdout=subprocess.PIPE, cwd=None):
    """Run `dpx` in a child process (DPX_DEBUG=1: a programming error shows its traceback).
    The timeout only guards the suite against a hang; it is no performance limit."""
    full_env = {**os.environ, "DPX_DEBUG": "1", **(env or {})}
    return subprocess.run(
        dpx_command(*args),
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        timeout=600,
        cwd=cwd or Path(__file__).resolve().parents[2],
    )


def assert_one_error_line(err: str, context: str = "") -> None:
    """Exit-2 contract: exactly one line on stderr, `dpx: error: ...`, no traceback."""
    lines = err.strip().splitlines()
    assert "Traceback" not in err, f"{context}: traceback\n{err}"
    assert len(lines) == 1, f"{context}: expected one stderr line, got {len(lines)}:\n{err}"
    assert lines[0].startswith("dpx: error: "), f"{context}: {lines[0]}"


def temporaries(directory: Path) -> list[Path]:
    return sorted(p for p in Path(directory).rglob("*") if TEMP_MARK in p.name)


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fault-data")


@pytest.fixture(scope="session")
def people_csv(data_dir) -> Path:
    return write_people(data_dir / "people.csv")


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return path


@pytest.fixture
def dev_full(tmp_path) -> Path:
    """A `/dev/full` to write to. As root, a private copy of the device node (mknod), so that a
    writer that wrongly renames over it replaces the copy, not the system's device."""
    if os.geteuid() != 0:
        return Path("/dev/full")
    path = tmp_path / "full"
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        with open(path, "w") as fh:  # the mount may forbid devices (nodev)
            fh.write("x")
            fh.flush()
    except OSError as err:
        if err.errno == 28:  # ENOSPC: a working /dev/full copy
            return path
        loud_skip(f"cannot make a private /dev/full as root ({err.strerror})")
    loud_skip("the private /dev/full copy accepted a write")
    return path  # pragma: no cover


def _mount(target: Path, options: str) -> str | None:
    """Mount a tmpfs at `target`; None on success, else the reason."""
    if os.geteuid() != 0:
        return "not root: cannot mount a tmpfs"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, f"dpx-{uuid.uuid4().hex[:8]}", str(target)],
        capture_output=True,
        text=True,
    )
    return None if done.returncode == 0 else f"mount failed: {done.stderr.strip()}"


@contextlib.contextmanager
def tmpfs(target: Path, size: str, read_only: bool = False):
    """A tmpfs of `size` mounted at `target` for the duration (loud skip if impossible)."""
    target.mkdir(parents=True, exist_ok=True)
    reason = _mount(target, f"size={size},mode=0777" + (",ro" if read_only else ""))
    if reason is not None:
        loud_skip(f"tiny file system tests need a tmpfs ({reason})")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def fill_up(directory: Path) -> Path:
    """Fill the file system of `directory` until a write fails with ENOSPC."""
    filler = directory / "filler.bin"
    block = b"\0" * 4096
    with open(filler, "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(block)
        except OSError as err:
            assert err.errno == 28, err
    return filler
