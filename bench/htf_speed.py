"""HTF speed and memory benchmark (issue 5 targets); prints one JSON object.

1. `dpx htf` end to end (read, bin, build, release to GeoJSON) on N = 1e5, 1e6, 1e7 points and a
   1024 grid, against reading the same file and binning it with numpy alone, in the same run.
   Targets at 1e6: <= 2 s and <= 3x the read+bin baseline.
2. All nine methods x 3 query sizes x 2000 queries x 1 repetition at 1e6 points (target <= 15 s).
3. Peak memory of `dpx htf` at 1e7 points in a fresh process (target < 2 GiB).

Usage: .venv/bin/python bench/htf_speed.py [--sizes 1e5,1e6,1e7] [--mode secure|seeded]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# `dpx htf` records runs in the release registry: never the user's ~/.dpx from a benchmark
os.environ.setdefault("DPX_REGISTRY", tempfile.mkdtemp(prefix="dpx-bench-"))

from core.cli import main as dpx  # noqa: E402
from core.spatial.evaluate import compare  # noqa: E402
from core.spatial.grid import Grid, bin_points  # noqa: E402
from core.spatial.methods import DEFAULT_COMPARE  # noqa: E402
from core.spatial.synthetic import SYNTHETIC_BBOX, mixture_points, to_lonlat  # noqa: E402

BBOX = ",".join(str(v) for v in SYNTHETIC_BBOX)


def write_points(n: int, path: Path) -> None:
    x, y = mixture_points(n, np.random.default_rng(n % 1000 + 1))
    lon, lat = to_lonlat(x, y)
    pd.DataFrame({"lat": lat, "lon": lon}).to_csv(path, index=False, float_format="%.7f")


def read_and_bin(path: Path) -> float:
    """Baseline: read the two columns (pandas' Arrow CSV reader) and bin with numpy alone."""
    t0 = time.perf_counter()
    df = pd.read_csv(path, engine="pyarrow")
    lon, lat = df["lon"].to_numpy(), df["lat"].to_numpy()
    x0, y0, x1, y1 = SYNTHETIC_BBOX
    c = np.minimum(((lon - x0) / (x1 - x0) * 1024).astype(np.int64), 1023)
    r = np.minimum(((lat - y0) / (y1 - y0) * 1024).astype(np.int64), 1023)
    np.bincount(r * 1024 + c, minlength=1024 * 1024)
    return time.perf_counter() - t0


def dpx_htf(path: Path, out: Path, seed: int | None) -> float:
    argv = [
        "htf",
        str(path),
        "--bbox",
        BBOX,
        "--grid",
        "1024",
        "--epsilon",
        "0.1",
        "--out",
        str(out),
    ]
    if seed is not None:
        argv += ["--seed", str(seed)]
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = dpx(argv)
    dt = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"dpx htf failed with exit code {code}")
    return dt


def fresh_process(path: Path, out: Path, seed: int | None) -> tuple[float, float]:
    """`dpx htf` in a new Python process: (wall seconds incl. imports, peak RSS in MiB)."""
    code = (
        "import resource, sys; from core.cli import main; "
        f"rc = main(['htf', {str(path)!r}, '--bbox', {BBOX!r}, '--grid', '1024', '--epsilon', '0.1', "
        f"'--out', {str(out)!r}] + ({['--seed', str(seed)] if seed is not None else []!r})); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - t0
    return wall, int(res.stdout.strip().splitlines()[-1]) / 1024  # ru_maxrss is in KiB on Linux


def methods_time(n: int, seed: int) -> dict:
    x, y = mixture_points(n, np.random.default_rng(5))
    lon, lat = to_lonlat(x, y)
    F = bin_points(lon, lat, Grid(1024, 1024, SYNTHETIC_BBOX)).F
    t0 = time.perf_counter()
    comp = compare(F, 0.1, list(DEFAULT_COMPARE), n_queries=2000, reps=1, seed=seed)
    total = time.perf_counter() - t0
    per = {r["method"]: round(r["build_seconds"], 3) for r in comp.rows if r["query_size"] == 0.02}
    return {"seconds": round(total, 2), "build_seconds_per_method": per}


def identity_time(n: int, mode: str, repeat: int) -> dict:
    """The Identity baseline (one noisy count per cell, 1024 x 1024 = 1,048,576 draws)."""
    from core.privacy import Accountant, Cost, Noise
    from core.spatial.methods import get_method

    x, y = mixture_points(n, np.random.default_rng(5))
    F = bin_points(*to_lonlat(x, y), Grid(1024, 1024, SYNTHETIC_BBOX)).F
    build = get_method("identity")
    times = []
    for _ in range(repeat):
        noise = Noise.secure() if mode == "secure" else Noise.seeded(1)
        t0 = time.perf_counter()
        build(F, 0.1, Accountant(noise, Cost(0.1)))
        times.append(time.perf_counter() - t0)
    return {"grid": 1024, "draws": 1024 * 1024, "build_seconds": round(min(times), 2)}


def sampler_us_per_draw(n: int = 200_000) -> dict:
    """OpenDP's i64 discrete Laplace in this run: one call, and the chunked threaded path."""
    from core.privacy import noise as noise_mod

    meas = noise_mod._opendp_laplace("int", 10.0)
    zeros = np.zeros(n, dtype=np.int64)
    meas(zeros[:10])
    t0 = time.perf_counter()
    meas(zeros)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    noise_mod._secure_draws(meas, n, np.int64)
    chunked = time.perf_counter() - t0
    return {
        "draws": n,
        "one_call_us_per_draw": round(one / n * 1e6, 2),
        "threaded_us_per_draw": round(chunked / n * 1e6, 2),
        "threads": noise_mod.DRAW_WORKERS,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5,1e6,1e7")
    ap.add_argument("--mode", choices=["secure", "seeded"], default="secure")
    ap.add_argument("--repeat", type=int, default=3, help="timings: best of this many runs")
    ap.add_argument("--skip-methods", action="store_true", help="skip the all-methods timing")
    args = ap.parse_args()
    seed = None if args.mode == "secure" else 1
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    out: dict = {"mode": args.mode, "grid": 1024, "epsilon": 0.1, "end_to_end": []}
    out["load_average_at_start"] = [round(v, 2) for v in os.getloadavg()]
    out["cpu_count"] = os.cpu_count()
    if args.mode == "secure":
        out["opendp_i64_sampler"] = sampler_us_per_draw()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for n in sizes:
            path = tmp / f"points_{n}.csv"
            write_points(n, path)
            base = min(read_and_bin(path) for _ in range(args.repeat))
            e2e = min(dpx_htf(path, tmp / "r.geojson", seed) for _ in range(args.repeat))
            row = {
                "n_points": n,
                "file_mb": round(path.stat().st_size / 1e6, 1),
                "read_and_bin_seconds": round(base, 3),
                "dpx_htf_seconds": round(e2e, 3),
                "ratio": round(e2e / base, 2),
            }
            if n == 1_000_000:
                row["target_2s_met"] = e2e <= 2.0
                row["target_3x_met"] = e2e <= 3 * base
            wall, rss = fresh_process(path, tmp / "m.geojson", seed)
            row["fresh_process_seconds"] = round(wall, 3)  # includes Python/numpy/pandas imports
            row["peak_rss_mib"] = round(rss, 1)
            if n >= 10_000_000:
                row["target_2gib_met"] = rss < 2048
            out["end_to_end"].append(row)
            path.unlink()
    out["identity_1024"] = identity_time(1_000_000, args.mode, args.repeat)
    out["identity_1024"]["target_15s_met"] = out["identity_1024"]["build_seconds"] < 15
    out["load_average_at_end"] = [round(v, 2) for v in os.getloadavg()]
    if args.skip_methods:
        print(json.dumps(out, indent=2))
        return
    m = methods_time(1_000_000, 1)
    m["target_15s_met"] = m["seconds"] <= 15
    out["all_methods_1e6"] = {
        "methods": list(DEFAULT_COMPARE),
        "queries": "3 sizes x 2000",
        "reps": 1,
        **m,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
