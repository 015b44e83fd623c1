"""DP SQL at scale: `dpx sql` on a Parquet file versus its DP-shaped floor (issue 22).

Generates Parquet tables (uid, dept: 40 values, amount, note: a string) of 1M, 10M and 50M rows
in --dir (default /tmp/dpx_scale_sql; never in the repository), ~10 rows per user, in two
layouts: `one` (every user in one department) and `spread` (every user in up to 8, ~6 on
average). Then
measures whole processes (wall time and peak RSS from /usr/bin/time -v):

- dpx:   `dpx sql --table t=FILE --uid uid --query Q --seed 1 --json`, C_u = 2;
- floor: DuckDB on the same file, in a fresh Python process: the per-unit aggregation with
         clamping, then the cross-unit GROUP BY, no noise, no sampling (what any DP plan must do).

Runs are interleaved (floor, dpx, floor, dpx, ...); the machine's load average is recorded with
each. Prints JSON; `--md FILE` also writes a Markdown table.

    .venv/bin/python bench/scale_sql.py [--sizes 1000000 10000000 50000000] [--repeats 3]
        [--repeats-large 1] [--layouts one spread] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
DPX = ROOT / ".venv" / "bin" / "dpx"
DPX_BIN = [DPX]  # --dpx: another checkout's dpx (a before/after comparison)
# --checkout DIR: run `core.cli.main` from DIR's code with this Python instead of a dpx script
# (a git worktree has no .venv of its own; `git archive <commit> core` gives a "before")
CHECKOUT: list[Path | None] = [None]
DPX_EXTRA: list[str] = []  # --dpx-args: extra arguments of every measured dpx sql
PYTHON = ROOT / ".venv" / "bin" / "python"
if not PYTHON.exists():  # a git worktree: the Python running this script
    PYTHON = Path(sys.executable)
DEPTS = 40
ROWS_PER_USER = 10
SPREAD = 8
CU = 2

QUERY = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-6, "
    f"max_groups_contributed = {CU}) dept, ANON_COUNT(*, 5) AS c, "
    "ANON_SUM(amount, 0, 100) AS s FROM t GROUP BY dept"
)
FLOOR = """
import duckdb, sys
con = duckdb.connect()
con.execute("SET threads = {threads}")
rows = con.execute('''
SELECT dept, COUNT(*) AS units, SUM(LEAST(c, 5)) AS c, SUM(s) AS s FROM (
  SELECT uid, dept, COUNT(*) AS c, SUM(LEAST(GREATEST(amount, 0), 100)) AS s
  FROM read_parquet('{path}') WHERE uid IS NOT NULL GROUP BY uid, dept
) GROUP BY dept ORDER BY dept''').fetchall()
print(len(rows))
"""


def generate(path: Path, rows: int, layout: str, threads: int) -> None:
    """`rows` rows in no particular order, ~ROWS_PER_USER per user (uid drawn by a hash of the
    row number); `spread` gives each user up to SPREAD departments (~6 on average)."""
    if path.exists():
        return
    dept = (
        f"(uid * 7) % {DEPTS}"
        if layout == "one"
        else f"(uid * 7 + (range % {SPREAD}) * 5) % {DEPTS}"
    )
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET threads = {threads}")
    con.execute("SELECT setseed(0.5)")
    tmp = path.with_suffix(".part")
    con.execute(
        f"""COPY (
          SELECT uid, 'd' || lpad(({dept})::VARCHAR, 2, '0') AS dept,
                 round(random() * 120 - 10, 2) AS amount,
                 'note ' || (hash(range + 1) % 1000)::VARCHAR AS note
          FROM (SELECT range, hash(range) % {rows // ROWS_PER_USER} AS uid FROM range({rows}))
        ) TO '{tmp}' (FORMAT parquet)"""
    )
    con.close()
    tmp.rename(path)


def timed(argv: list[str], env: dict | None = None, cwd: Path = ROOT) -> dict:
    """Whole-process wall time and peak RSS (GNU time -v)."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(
        ["/usr/bin/time", "-v", *argv], capture_output=True, text=True, env=env, cwd=cwd
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:3]} failed: {done.stderr[-600:]}")
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)[1])
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", done.stderr)[1])
              for kind in ("User", "System"))  # fmt: skip
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 2), "peak_rss_mb": round(rss_kb / 1024, 1),
            "load1": load, "stdout": done.stdout}  # fmt: skip


def dpx_argv(path: Path, registry: Path) -> list[str]:
    if CHECKOUT[0] is not None:
        code = "import sys; from core.cli import main; sys.exit(main(sys.argv[1:]))"
        return [str(PYTHON), "-c", code, "sql", "--table", f"t={path}", "--uid", "uid", "--query",
                QUERY, "--seed", "1", "--json", "--registry", str(registry), *DPX_EXTRA]  # fmt: skip
    return [str(DPX_BIN[0]), "sql", "--table", f"t={path}", "--uid", "uid", "--query", QUERY,
            "--seed", "1", "--json", "--registry", str(registry), *DPX_EXTRA]  # fmt: skip


def measure(path: Path, repeats: int, threads: int, registry: Path) -> dict:
    floors, dpxs = [], []
    released = None
    for _ in range(repeats):
        floor = timed([str(PYTHON), "-c", FLOOR.format(path=path, threads=threads)])
        floors.append(floor)
        run = timed(dpx_argv(path, registry), cwd=CHECKOUT[0] or ROOT)
        out = json.loads(run["stdout"])
        released = out["partitions_released"]
        run["time_limit_s"] = out["time_limit"]["seconds"]
        dpxs.append(run)
    for r in floors + dpxs:
        r.pop("stdout")
    med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
    return {
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "floor": {k: med(floors, k) for k in ("wall_s", "cpu_s", "peak_rss_mb")},
        "dpx": {k: med(dpxs, k) for k in ("wall_s", "cpu_s", "peak_rss_mb")},
        "ratio": round(med(dpxs, "wall_s") / med(floors, "wall_s"), 2),
        "cpu_ratio": round(med(dpxs, "cpu_s") / med(floors, "cpu_s"), 2),
        "partitions_released": released,
        "runs": {"floor": floors, "dpx": dpxs},
    }


def _sampling_span(sql: str) -> tuple[int, int, int]:
    """Where the C_u sampling stages start (part_keys, or keyed before issue 30), where
    `sampled` starts, and where it ends, in the executed SQL."""
    start = sql.find("part_keys AS (")
    if start < 0:
        start = sql.index(", keyed AS (") + 2
    sampled = sql.index(", sampled AS (")
    end = sql.index(", clamped AS (")
    return start, sampled, end


def key_cost(path: Path, repeats: int) -> dict:
    """What C_u sampling costs, in one process on one locked engine, alternating (medians of
    wall and CPU seconds): the executed query as shipped; the same with DuckDB's own
    hash(_uid, k0) as the key (DuckDB only: Spark's hash differs); and the same without C_u
    sampling at all (sampled = per_user; what no DP plan may do, the cost's lower bound).
    Run with PYTHONPATH naming the checkout to measure (this script imports `core`)."""
    import hashlib

    from core.dpsql.execute.engine import Engine
    from core.dpsql.service import prepare
    from core.dpsql.tables import catalog_of_files
    from core.privacy import Noise

    catalog = catalog_of_files([("t", path)], uid="uid")
    shipped = prepare(QUERY, catalog, Noise.seeded(1), {}).executed_sql
    start, sampled, end = _sampling_span(shipped)
    native = shipped[:start] + "keyed AS (SELECT *, hash(_uid, k0) AS _r FROM per_user)"
    native += shipped[sampled:]
    unsampled = shipped[:start] + "sampled AS (SELECT * FROM per_user)" + shipped[end:]
    engine = Engine(catalog, timeout_s=3600)
    variants = {"shipped": shipped, "duckdb_hash": native, "no_sampling": unsampled}
    times: dict[str, list] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, sql in variants.items():
            cpu, wall = time.process_time(), time.perf_counter()
            engine.fetch(sql)
            times[name].append((time.perf_counter() - wall, time.process_time() - cpu))
    engine.close()
    out = {
        name: {
            "wall_s": round(statistics.median(w for w, _ in runs), 2),
            "cpu_s": round(statistics.median(c for _, c in runs), 2),
        }
        for name, runs in times.items()
    }
    out["sql_digest"] = hashlib.sha256(shipped.encode()).hexdigest()[:12]
    out["core"] = str(Path(sys.modules["core"].__file__).parent)
    return out


def markdown(results: list[dict]) -> str:
    lines = [
        "| rows | layout | file MB | floor s | dpx s | ratio | floor CPU-s | dpx CPU-s | CPU ratio "
        "| floor RSS MB | dpx RSS MB | load1 |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        load = max(x["load1"] for x in r["runs"]["dpx"] + r["runs"]["floor"])
        lines.append(
            f"| {r['rows']:,} | {r['layout']} | {r['file_mb']} | {r['floor']['wall_s']:.2f} | "
            f"{r['dpx']['wall_s']:.2f} | {r['ratio']:.2f} | {r['floor']['cpu_s']:.2f} | "
            f"{r['dpx']['cpu_s']:.2f} | {r['cpu_ratio']:.2f} | {r['floor']['peak_rss_mb']:.0f} | "
            f"{r['dpx']['peak_rss_mb']:.0f} | {load:.2f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path, default=Path("/tmp/dpx_scale_sql"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000, 50_000_000])
    parser.add_argument("--layouts", nargs="+", default=["one", "spread"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--repeats-large", type=int, default=1, help="for sizes >= 50M")
    parser.add_argument("--threads", type=int, default=2, help="DuckDB threads of the floor")
    parser.add_argument("--md", type=Path)
    parser.add_argument("--dpx", type=Path, default=DPX, help="the dpx to measure")
    parser.add_argument("--checkout", type=Path, help="run core.cli from this directory's code")
    parser.add_argument("--no-key-cost", action="store_true", help="skip the sampling-key A/B")
    parser.add_argument(
        "--dpx-args", default="", help="extra dpx sql arguments, e.g. '--memory-limit 1GB "
        "--spill-dir /tmp/spill'"
    )  # fmt: skip
    args = parser.parse_args()
    DPX_BIN[0] = args.dpx
    if args.checkout is not None or not DPX.exists():
        CHECKOUT[0] = (args.checkout or ROOT).resolve()
    DPX_EXTRA[:] = args.dpx_args.split()
    args.dir.mkdir(parents=True, exist_ok=True)
    results = []
    for rows in args.sizes:
        for layout in args.layouts:
            path = args.dir / f"t_{rows}_{layout}.parquet"
            generate(path, rows, layout, threads=1)
            repeats = args.repeats_large if rows >= 50_000_000 else args.repeats
            result = measure(path, repeats, args.threads, args.dir / "registry")
            if layout == "spread" and not args.no_key_cost:
                result["sampling_key"] = key_cost(path, repeats)
            results.append({"rows": rows, "layout": layout, **result})
            print(json.dumps(results[-1]["dpx"] | {"rows": rows, "layout": layout,
                                                   "ratio": result["ratio"]}), file=sys.stderr)  # fmt: skip
    out = {
        "benchmark": "dpx sql on Parquet vs the DP-shaped floor (DuckDB, same file)",
        "query": QUERY,
        "dpx": str(CHECKOUT[0] or args.dpx),
        "dpx_args": DPX_EXTRA,
        "rows_per_user": ROWS_PER_USER,
        "spread_departments": SPREAD,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "duckdb": duckdb.__version__,
        },  # fmt: skip
        "results": results,
    }
    print(json.dumps(out, indent=2))
    if args.md:
        args.md.write_text(markdown(results) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
