"""Anchors side by side (issue 11): dpx sql (DuckDB), SmartNoise SQL and Tumult Analytics
(Spark, local[2]) on the same data and the same single-table query, each in its own process.

Data: `synthetic_shop(1M users, 8.5 rows/user, seed 11)` flattened to one table
shop(uid, region, amount), ~10.1M rows, 50 regions, written once to CSV. Query, in each
tool's own terms (epsilon = 1 in total; delta = 1e-6 where the tool selects partitions):

    SELECT region, COUNT(*), SUM(amount) FROM shop GROUP BY region
    -- each unit (uid) in <= 1 region, <= 5 rows per unit, amount clamped to [0, 100]

Each child prints JSON (load and query seconds inside the process); this script adds the
whole-process wall time and the peak resident memory of the child's process tree (the JVM
included), sampled from /proc every 0.1 s. The anchors run in the virtual environments made by
bench/anchors/setup.sh; a tool whose environment is missing is reported as such. Prints JSON.

    .venv/bin/python bench/anchors_run.py [--users 1000000] [--tools dpx,smartnoise,tumult]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PYTHONS = {
    "dpx": Path(sys.executable),
    "smartnoise": HERE / "anchors" / "venv-smartnoise" / "bin" / "python",
    "tumult": HERE / "anchors" / "venv-tumult" / "bin" / "python",
}


def make_data(users: int, rows_per_user: float, path: Path) -> int:
    sys.path.insert(0, str(HERE.parent))
    from core.dpsql.demos import synthetic_shop

    data = synthetic_shop(n_users=users, mean_rows=rows_per_user, n_categories=200, seed=11)
    shop = data["purchases"].merge(data["users"][["uid", "region"]], on="uid")
    shop[["uid", "region", "amount"]].to_csv(path, index=False)
    return len(shop)


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*") if Path(f"/proc/{p}").exists() else []:
            with contextlib.suppress(OSError):
                todo += [int(c) for c in (task / "children").read_text().split()]
    return out


def run_child(tool: str, csv: Path, timeout_s: float) -> dict:
    python = PYTHONS[tool]
    if not python.exists():
        return {"tool": tool, "error": f"{python} missing: run bash bench/anchors/setup.sh"}
    script = HERE / f"anchors_{tool}.py"
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) if tool == "dpx" else "")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [str(python), str(script), str(csv)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], sum(_rss_kb(p) for p in _tree(proc.pid)))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return {"tool": tool, "error": f"timed out after {timeout_s:g} s"}
    wall = time.perf_counter() - t0
    sampler.join()
    if proc.returncode != 0:
        return {"tool": tool, "error": err.strip().splitlines()[-1:] or ["exit"]}
    result = json.loads(out)
    result.update({"whole_process_s": round(wall, 2), "peak_rss_tree_mb": round(peak[0] / 1024, 1)})
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--users", type=int, default=1_000_000)
    ap.add_argument("--rows-per-user", type=float, default=8.5)
    ap.add_argument("--tools", default="dpx,smartnoise,tumult")
    ap.add_argument("--timeout", type=float, default=1800)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "shop.csv"
        t0 = time.perf_counter()
        rows = make_data(args.users, args.rows_per_user, csv)
        gen = time.perf_counter() - t0
        results = [run_child(t, csv, args.timeout) for t in args.tools.split(",")]
    load = os.getloadavg()
    print(
        json.dumps(
            {
                "benchmark": "anchors",
                "rows": rows,
                "users": args.users,
                "regions": 50,
                "csv_generate_s": round(gen, 2),
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
                "load_average_after": [round(x, 2) for x in load],
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
