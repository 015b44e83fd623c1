"""`dpx balance --perturb --out` on 1M/10M/50M records against its floor. Prints one JSON object.

Input: Parquet files of records (id, sa, age) generated in --dir (default /tmp; never in the
repository), seeded: the SA has 1,000 values with Zipf-like weights 1/rank. Measured, each as a
whole process (wall time and peak RSS from /usr/bin/time, the machine's 1-minute load before
each run): the secure publication of SA + age (--columns age) to a CSV, and the floor — DuckDB
reading the same file and counting the SA values (and, as a second floor, also writing the
published columns to CSV). --lean leaves the id column out (a smaller file). --code DIR runs dpx from another checkout
(the before/after comparison). Not a test.

    .venv/bin/python bench/scale_pp.py [--sizes 1000000,10000000] [--repeats 3] [--code DIR]
        [--dir /tmp/dpx-scale]
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

VALUES = 1000


def make_records(n: int, directory: Path, lean: bool = False) -> Path:
    """n records: a running id (not with `lean`), the SA (v0000..v0999, weights 1/rank) and an
    age; written once."""
    path = directory / f"records_{'lean_' if lean else ''}{n}.parquet"
    if path.exists():
        return path
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(5)
    weights = 1.0 / np.arange(1, VALUES + 1)
    weights /= weights.sum()
    labels = np.array([f"v{i:04d}" for i in range(VALUES)])
    writer = None
    tmp = path.with_suffix(".part")
    for start in range(0, n, 5_000_000):
        m = min(5_000_000, n - start)
        columns = {} if lean else {"id": np.arange(start, start + m)}
        columns["sa"] = labels[rng.choice(VALUES, size=m, p=weights)]
        columns["age"] = rng.integers(18, 90, m)
        table = pa.table(columns)
        writer = writer or pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table)
    writer.close()
    tmp.rename(path)
    return path


FLOOR = """
import duckdb
duckdb.connect().execute("SELECT sa, count(*) FROM read_parquet(?) GROUP BY sa", ['{path}']).fetchall()
"""
# the floor of a publication: read the file, count the SA and write the published columns out
FLOOR_WRITE = (
    FLOOR
    + """
duckdb.connect().execute("COPY (SELECT sa, age FROM read_parquet('{path}')) TO '{out}' (HEADER)")
"""
)


def run(
    sizes: list[int],
    repeats: int,
    code: Path | None,
    directory: Path,
    before: Path | None,
    lean: bool,
) -> dict:
    directory.mkdir(parents=True, exist_ok=True)
    start = machine()
    dpx, env = dpx_argv(code)
    env = {**env, "DPX_REGISTRY": str(directory / "registry")}
    results = []
    for n in sizes:
        path = make_records(n, directory, lean)
        out = directory / f"published_{n}.csv"
        reps = repeats if n <= 10_000_000 else 1
        args = ["balance", str(path), "--sa", "sa", "--rho1", "1/5", "--rho2", "1/2", "--perturb",
                "--columns", "age", "--accept-fallback", "--out", str(out), "--json"]  # fmt: skip
        floor_out = directory / f"floor_{n}.csv"
        commands = {
            "publish": ([*dpx, *args], env),
            "floor": (floor_argv(FLOOR.format(path=path)), None),
            "floor_read_count_write": (
                floor_argv(FLOOR_WRITE.format(path=path, out=floor_out)),
                None,
            ),
        }
        if before is not None:
            old, old_env = dpx_argv(before)
            commands["publish_before"] = (
                [*old, *args],
                {**old_env, "DPX_REGISTRY": env["DPX_REGISTRY"]},
            )
        timings = interleaved(commands, reps)
        publish, floor = timings["publish"], timings["floor"]
        floor_write = timings["floor_read_count_write"]
        floor_out.unlink(missing_ok=True)
        results.append(
            {
                "rows": n,
                "file_mb": round(path.stat().st_size / 2**20, 1),
                "published_mb": round(out.stat().st_size / 2**20, 1) if out.exists() else None,
                **timings,
                "ratio_wall": round(publish["wall_s"] / floor["wall_s"], 2),
                "ratio_wall_write": round(publish["wall_s"] / floor_write["wall_s"], 2),
                **(
                    {
                        "ratio_wall_before": round(
                            timings["publish_before"]["wall_s"] / floor["wall_s"], 2
                        )
                    }
                    if before is not None
                    else {}
                ),
                "ratio_rss": round(publish["peak_rss_mb"] / floor["peak_rss_mb"], 2),
            }
        )
        print(json.dumps(results[-1]), file=sys.stderr, flush=True)
        out.unlink(missing_ok=True)
        out.with_name(out.stem + ".metadata.json").unlink(missing_ok=True)
    return {
        "benchmark": "dpx balance --perturb --columns age --out (secure) vs DuckDB read+count",
        "code": str(code or "this checkout"),
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
    ap.add_argument("--lean", action="store_true", help="records without the id column")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(
        json.dumps(run(sizes, args.repeats, args.code, args.dir, args.before, args.lean), indent=2)
    )


if __name__ == "__main__":
    main()
