"""Regenerate the location-histogram demo datasets as CSV files (seeded; nothing large is committed).

Usage: .venv/bin/python demo_data/spatial/generate.py [OUT_DIR] [--all-sizes]

Writes lat/lon CSVs of the page's demos (the paper's single Gaussians, sigma 20/50/100 cells on a
1024 grid, 100,000 points; the multi-cluster "city", 200,000 points) and, with --all-sizes, the
benchmark sizes N = 1e5 and 1e6 for every sigma. The same data are generated in memory by
core/spatial/demos.py and bench/, so these files are only for use outside the app.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.spatial.demos import DEMOS  # noqa: E402
from core.spatial.synthetic import SIGMAS, gaussian_points, to_lonlat  # noqa: E402


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else Path(__file__).parent / "generated"
    out.mkdir(parents=True, exist_ok=True)
    for demo in DEMOS:
        if demo.name.startswith("htf-"):
            demo.load().to_csv(out / f"{demo.name}.csv", index=False, float_format="%.7f")
            print(out / f"{demo.name}.csv")
    if "--all-sizes" in sys.argv:
        for n in (100_000, 1_000_000):
            for sigma in SIGMAS:
                lon, lat = to_lonlat(
                    *gaussian_points(n, sigma, np.random.default_rng(int(sigma) + n))
                )
                path = out / f"gaussian_sigma{int(sigma)}_n{n}.csv"
                pd.DataFrame({"lat": lat, "lon": lon}).to_csv(
                    path, index=False, float_format="%.7f"
                )
                print(path)


if __name__ == "__main__":
    main()
