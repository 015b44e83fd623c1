"""`dpx release --method auto` on 1M/10M/50M points against its floor. Prints one JSON object.

Input: Parquet files of clustered points (lat, lon, uid) generated in --dir (default /tmp; never
in the repository), seeded. Measured, each as a whole process (wall time and peak RSS from
/usr/bin/time, the machine's 1-minute load before each run): the secure release (no seed)
printing its leaves with --json to /dev/null, and the floor — DuckDB reading the same file and
counting the points per grid cell (the same cell arithmetic, no checks, no noise). --code DIR
runs dpx from another checkout (the before/after comparison). Not a test.

    .venv/bin/python bench/scale_location.py [--sizes 1000000,10000000] [--repeats 3]
        [--code DIR] [--dir /tmp/dpx-scale]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_run import dpx_argv, floor_argv, interleaved, machine  # noqa: E402

BBOX = (-118.6, 33.7, -117.9, 34.4)
GRID = 1024


def make_points(n: int, directory: Path) -> Path:
    """n clustered points in BBOX (50 Gaussian clusters) with a person id; written once."""
    path = directory / f"points_{n}.parquet"
    if path.exists():
        return path
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    centers_x, centers_y = rng.uniform(-118.5, -118.0, 50), rng.uniform(33.8, 34.3, 50)
    writer = None
    tmp = path.with_suffix(".part")
    for start in range(0, n, 5_000_000):  # in chunks: the generator stays small too
        m = min(5_000_000, n - start)
        c = rng.integers(0, 50, m)
        table = pa.table(
            {
                "lat": centers_y[c] + rng.normal(0, 0.02, m),
                "lon": centers_x[c] + rng.normal(0, 0.02, m),
                "uid": rng.integers(0, max(n // 20, 1), m),
            }
        )
        writer = writer or pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table)
    writer.close()
    tmp.rename(path)
    return path


FLOOR = """
import duckdb
x0, y0, x1, y1 = {bbox}
n = {grid}
con = duckdb.connect()
rows = con.execute(
    "SELECT least(greatest(CAST(floor((lat - ?) / ? * ?) AS BIGINT), 0), ? - 1) * ? + "
    "least(greatest(CAST(floor((lon - ?) / ? * ?) AS BIGINT), 0), ? - 1) AS cell, count(*) "
    "FROM read_parquet(?) WHERE lon BETWEEN ? AND ? AND lat BETWEEN ? AND ? GROUP BY cell",
    [y0, y1 - y0, float(n), n, n, x0, x1 - x0, float(n), n, '{path}', x0, x1, y0, y1],
).fetchall()
"""


def run(
    sizes: list[int], repeats: int, code: Path | None, directory: Path, before: Path | None
) -> dict:
    directory.mkdir(parents=True, exist_ok=True)
    start = machine()
    dpx, env = dpx_argv(code)
    env = {**env, "DPX_REGISTRY": str(directory / "registry")}
    bbox = ",".join(str(v) for v in BBOX)
    results = []
    for n in sizes:
        path = make_points(n, directory)
        reps = repeats if n <= 10_000_000 else 1
        args = ["release", str(path), "--method", "auto", "--epsilon", "1", f"--bbox={bbox}",
                "--lat", "lat", "--lon", "lon", "--json"]  # fmt: skip
        commands = {
            "release": ([*dpx, *args], env),
            "floor": (floor_argv(FLOOR.format(bbox=BBOX, grid=GRID, path=path)), None),
        }
        if before is not None:
            old, old_env = dpx_argv(before)
            commands["release_before"] = (
                [*old, *args],
                {**old_env, "DPX_REGISTRY": env["DPX_REGISTRY"]},
            )
        timings = interleaved(commands, reps)
        release, floor = timings["release"], timings["floor"]
        results.append(
            {
                "rows": n,
                "file_mb": round(path.stat().st_size / 2**20, 1),
                **timings,
                "ratio_wall": round(release["wall_s"] / floor["wall_s"], 2),
                "ratio_rss": round(release["peak_rss_mb"] / floor["peak_rss_mb"], 2),
                **(
                    {
                        "ratio_wall_before": round(
                            timings["release_before"]["wall_s"] / floor["wall_s"], 2
                        )
                    }
                    if before is not None
                    else {}
                ),
            }
        )
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    return {
        "benchmark": "dpx release --method auto (secure, --json) vs DuckDB read+bin",
        "code": str(code or "this checkout"),
        "grid": GRID,
        "machine": {**start, "loadavg_end": [round(v, 2) for v in os.getloadavg()]},
        "python": platform.python_version(),
        "results": results,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--code", type=Path, default=None, help="another checkout to run dpx from")
    ap.add_argument(
        "--before", type=Path, default=None, help="also run dpx from this checkout, interleaved"
    )
    ap.add_argument("--dir", type=Path, default=Path("/tmp/dpx-scale"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(json.dumps(run(sizes, args.repeats, args.code, args.dir, args.before), indent=2))


if __name__ == "__main__":
    main()
