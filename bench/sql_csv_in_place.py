"""A CSV table read in place with its declared schema (issue 27): `dpx sql` on a 50M-row CSV
against two floors, whole processes, interleaved.

- csv:            `dpx sql --table t=FILE.csv --uid uid ...` (the table read in place by DuckDB,
                  every value converted into its declared type);
- parquet:        the same query on the same rows as Parquet (the peak-memory floor);
- duckdb_groupby: DuckDB's own `SELECT dept, count(*) FROM read_csv(FILE) GROUP BY dept` in a
                  fresh Python process (the time floor of reading the CSV at all).

Targets: csv peak RSS <= 3 x parquet's, csv wall and CPU time <= 3 x duckdb_groupby's. The
tables (uid, dept: 40 values, amount, note) are written to --dir (default /tmp/dpx_csv_bench,
never the repository), ~5 rows per user, each user in one department. Prints JSON.

    .venv/bin/python bench/sql_csv_in_place.py [--rows 50000000] [--repeats 2]
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
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"
if not PYTHON.exists():  # a git worktree: the Python running this script
    PYTHON = Path(sys.executable)
CHECKOUT = [ROOT]  # --checkout DIR: the code `dpx sql` runs (cwd of its process)
QUERY = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) "
    "dept, ANON_COUNT(*, 5) AS n, ANON_SUM(amount, 0, 100) AS s FROM t GROUP BY dept"
)


def write_tables(rows: int, directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    csv, parquet = directory / f"t{rows}.csv", directory / f"t{rows}.parquet"
    if csv.exists() and parquet.exists():
        return csv, parquet
    con = duckdb.connect()
    con.execute(
        f"CREATE TABLE t AS SELECT i // 5 AS uid, 'd' || ((i // 5) % 40) AS dept, "
        f"round((hash(i) % 10000) / 100.0, 2) AS amount, 'n' || (i % 997) AS note "
        f"FROM range({rows}) r(i)"
    )
    con.execute(f"COPY t TO '{csv}' (HEADER, DELIMITER ',')")
    con.execute(f"COPY t TO '{parquet}' (FORMAT PARQUET)")
    con.close()
    return csv, parquet


def timed(argv: list[str], env: dict | None = None) -> dict:
    """Whole-process wall time, CPU seconds and peak RSS (GNU time -v), run in the checkout
    measured (`python -c` imports `core` from its working directory first)."""
    done = subprocess.run(
        ["/usr/bin/time", "-v", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        cwd=CHECKOUT[0],
    )
    if done.returncode != 0:
        raise SystemExit(f"failed: {argv}\n{done.stderr[-2000:]}")

    def field(name: str) -> str:
        return re.search(rf"{re.escape(name)}: (.+)", done.stderr)[1].strip()

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    seconds = sum(float(p) * 60**i for i, p in enumerate(reversed(wall)))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    rss_mb = int(field("Maximum resident set size (kbytes)")) / 1024
    return {"wall_s": round(seconds, 2), "cpu_s": round(cpu, 2), "peak_rss_mb": round(rss_mb)}


def dpx(path: Path) -> list:
    code = (
        "import sys; from core.cli import main; "
        "sys.exit(main(['sql', '--table', sys.argv[1], '--uid', 'uid', '--query', sys.argv[2], "
        "'--seed', '1', '--json']))"
    )
    return [PYTHON, "-c", code, f"t={path}", QUERY]


def duckdb_groupby(path: Path) -> list:
    code = (
        "import sys, duckdb; con = duckdb.connect(); "
        'con.execute(f"SET threads = {sys.argv[2]}"); '
        "print(con.execute(f\"SELECT dept, count(*) FROM read_csv('{sys.argv[1]}') "
        'GROUP BY dept").fetchall()[:1])'
    )
    return [PYTHON, "-c", code, path, str(min(4, os.cpu_count() or 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/dpx_csv_bench"))
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the code to measure")
    args = parser.parse_args()
    CHECKOUT[0] = args.checkout.resolve()
    csv, parquet = write_tables(args.rows, args.dir)
    runs: dict[str, list[dict]] = {"duckdb_groupby": [], "csv": [], "parquet": []}
    for _ in range(args.repeats):  # interleaved
        runs["duckdb_groupby"].append(timed(duckdb_groupby(csv)))
        runs["csv"].append(timed(dpx(csv)))
        runs["parquet"].append(timed(dpx(parquet)))

    def median(name: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[name])

    out = {
        "benchmark": "sql_csv_in_place",
        "rows": args.rows,
        "csv_bytes": csv.stat().st_size,
        "query": QUERY,
        "checkout": str(CHECKOUT[0]),
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "duckdb": duckdb.__version__,
            "load_average": os.getloadavg(),
        },  # fmt: skip
        "runs": runs,
        "ratios": {
            "csv_peak_rss_over_parquet": round(
                median("csv", "peak_rss_mb") / median("parquet", "peak_rss_mb"), 2
            ),
            "csv_wall_over_duckdb_groupby": round(
                median("csv", "wall_s") / median("duckdb_groupby", "wall_s"), 2
            ),
            "csv_cpu_over_duckdb_groupby": round(
                median("csv", "cpu_s") / median("duckdb_groupby", "cpu_s"), 2
            ),
        },
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
