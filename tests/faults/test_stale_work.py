"""Private work directories never outlive their process (issue 29 item 7): a killed run's
`dpx-spill-PID-*` / `dpx-pp-PID-*` / `dpx-spark-PID-*` directory — in the temp directory or in
a `--spill-dir` the run was given — is removed by the next `dpx` process of ANY kind, while a
live process's directory and anything not named by a process are kept."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path: Path) -> dict:
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    return {
        **os.environ,
        "TMPDIR": str(temp),
        "DPX_WORK_PARENTS": str(tmp_path / "cache" / "work-parents"),
        "DPX_REGISTRY": str(tmp_path / "registry"),
    }


def _python(code: str, env: dict) -> subprocess.CompletedProcess:
    """Run `code` with this checkout's `core` (cwd first on sys.path), not an installed one."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=True,
    )  # fmt: skip


def _killed_run(spill: Path | None, prefix: str, env: dict) -> Path:
    """A process that made a work directory (with private rows in it) and died without cleaning
    up (os._exit: like a kill -9); returns the directory it left."""
    parent = "None" if spill is None else repr(str(spill))
    done = _python(
        f"""
        import os
        from core.files import work_directory
        work = work_directory({prefix!r}, {parent})
        open(os.path.join(work.name, "rows.bin"), "wb").write(b"private rows")
        print(work.name, flush=True)
        os._exit(0)
        """,
        env,
    )
    left = Path(done.stdout.strip())
    assert left.is_dir() and (left / "rows.bin").exists()
    return left


def _dpx(env: dict, *args: str) -> subprocess.CompletedProcess:
    return _python(
        f"import sys; from core.cli import main; sys.exit(main({list(args)!r}))", env
    )


def test_a_later_dpx_of_any_kind_removes_a_killed_runs_spill_dir_but_not_a_live_ones(tmp_path):
    env = _env(tmp_path)
    spill = tmp_path / "my-spill"
    dead_spill = _killed_run(spill, "dpx-spill-", env)  # e.g. dpx sql --spill-dir my-spill
    dead_pp = _killed_run(None, "dpx-pp-", env)  # the temp directory
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        live_dir = spill / f"dpx-spill-{live.pid}-keep"
        live_dir.mkdir()
        (live_dir / "rows.bin").write_bytes(b"in use")
        unnamed = spill / "dpx-spark-abc12345"  # not named `<prefix><pid>-…`: never guessed
        unnamed.mkdir()
        _dpx(env, "dataset", "list")
        assert not dead_spill.exists() and not dead_pp.exists()
        assert (live_dir / "rows.bin").read_bytes() == b"in use"
        assert unnamed.is_dir()
    finally:
        live.kill()
        live.wait()
    _dpx(env, "demos")  # the process is gone now: its directory goes at the next start
    assert not live_dir.exists()


def test_the_parents_file_forgets_directories_that_are_gone(tmp_path):
    env = _env(tmp_path)
    spill = tmp_path / "gone"
    _killed_run(spill, "dpx-spill-", env)
    parents = Path(env["DPX_WORK_PARENTS"])
    assert str(spill.resolve()) in parents.read_text()
    for child in spill.iterdir():
        for f in child.iterdir():
            f.unlink()
        child.rmdir()
    spill.rmdir()
    _dpx(env, "demos")
    assert str(spill.resolve()) not in parents.read_text()
