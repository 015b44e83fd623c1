"""Shared helpers of the scale benchmarks (bench/scale_location.py, bench/scale_pp.py): a
command timed as a whole process (wall time, peak RSS from /usr/bin/time), the machine's load
around it, and the floor query run the same way. Not a test: nothing here asserts a time."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DPX_MAIN = "import sys\nfrom core.cli import main\nsys.exit(main())\n"


def timed(argv: list[str], env: dict | None = None, cwd: Path | None = None) -> dict:
    """One whole-process run: wall seconds, peak RSS (MB), exit code, load average before."""
    load = os.getloadavg()[0]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        cmd = ["/usr/bin/time", "-f", "%e %M", "-o", tf.name, *argv]
        t0 = time.perf_counter()
        proc = subprocess.run(
            cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        wall = time.perf_counter() - t0
        fields = Path(tf.name).read_text().split()
    rss_kb = int(fields[-1]) if fields else 0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr[-2000:])
    return {
        "wall_s": round(wall, 3),
        "peak_rss_mb": round(rss_kb / 1024, 1),
        "exit": proc.returncode,
        "load_before": round(load, 2),
    }


def median_run(argv, repeats: int, env=None, cwd=None) -> dict:
    """`repeats` runs; the median wall time and peak RSS, with every run kept."""
    return _summary([timed(argv, env, cwd) for _ in range(repeats)])


def interleaved(commands: dict[str, tuple[list[str], dict | None]], repeats: int) -> dict:
    """Each named command run `repeats` times, alternating (A B A B ...), so that a change in the
    machine's load hits every command alike; the median run of each (see `median_run`)."""
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, (argv, env) in commands.items():
            runs[name].append(timed(argv, env))
    return {name: _summary(rs) for name, rs in runs.items()}


def _summary(runs: list[dict]) -> dict:
    return {
        "wall_s": round(statistics.median(r["wall_s"] for r in runs), 3),
        "peak_rss_mb": round(statistics.median(r["peak_rss_mb"] for r in runs), 1),
        "exit": max(r["exit"] for r in runs),
        "runs": runs,
    }


def dpx_argv(code: Path | None) -> tuple[list[str], dict]:
    """How to run `dpx` from the source tree `code` (default: this checkout)."""
    tree = (code or ROOT).resolve()
    script = Path(tempfile.gettempdir()) / "dpx_bench_main.py"
    script.write_text(DPX_MAIN)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return [sys.executable, str(script)], env


def floor_argv(python_code: str) -> list[str]:
    return [sys.executable, "-c", python_code]


def machine() -> dict:
    return {"cpus": os.cpu_count(), "loadavg_start": [round(v, 2) for v in os.getloadavg()]}
