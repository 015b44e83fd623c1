"""Weight of the location page's release map: HTML bytes, build and render time (JSON out).

The same data as bench/app_latency.py's upload case (a seeded synthetic "country" of 200,000
points over the continental US), binned on a 1024 x 1024 grid, the page's 7 default methods at
epsilon 0.5 each with seeded noise (seeded only so that runs are comparable). Times are
in-process wall-clock seconds of `release_map` (build) and folium's `render()`; no browser.

    .venv/bin/python bench/map_weight.py [--points 200000] [--grid 1024]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from app_latency import US_BBOX, synthetic_country  # noqa: E402

from core.privacy import Accountant, Cost, Noise  # noqa: E402
from core.spatial.grid import Grid, bin_points  # noqa: E402
from core.spatial.methods import get_method  # noqa: E402
from core.viz.spatial import release_map  # noqa: E402

METHODS = ["auto", "htf", "ug", "ag", "kdtree-geo", "quadtree", "privtree"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=200_000)
    ap.add_argument("--grid", type=int, default=1024)
    ap.add_argument("--epsilon", type=float, default=0.5)
    args = ap.parse_args()
    df = synthetic_country(args.points)
    grid = Grid(args.grid, args.grid, US_BBOX)
    F = bin_points(df["lon"].to_numpy(), df["lat"].to_numpy(), grid).F
    releases = {}
    for i, m in enumerate(METHODS):
        releases[m] = get_method(m)(
            F, args.epsilon, Accountant(Noise.seeded(i), Cost(args.epsilon))
        )
    noise_info = Noise.seeded(0).describe()
    t0 = time.perf_counter()
    fmap, skipped = release_map(releases, grid, noise_info)
    t1 = time.perf_counter()
    html = fmap.get_root().render()
    t2 = time.perf_counter()
    print(
        json.dumps(
            {
                "points": args.points,
                "grid": args.grid,
                "leaves": {m: r.n_leaves for m, r in releases.items()},
                "total_leaves": sum(r.n_leaves for r in releases.values()),
                "skipped": skipped,
                "html_bytes": len(html.encode("utf-8")),
                "build_s": round(t1 - t0, 3),
                "render_s": round(t2 - t1, 3),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
