"""Release export: GeoJSON FeatureCollection (one rectangle per leaf) and CSV, with run metadata.

Only released quantities go out: leaf rectangles, noisy counts, the budget, public parameters
(grid, bbox) and the noise mode. True counts, the number of dropped points and the seed of a
seeded run stay private.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Protocol

import numpy as np

from core.privacy import Noise
from core.spatial.grid import Grid
from core.spatial.methods import BY_NAME, LeafNoise
from core.spatial.release import Release, charge_rows
from core.spatial.unit import POINT

DEMO_BBOX_LABEL = "DEMO — bounding box derived from the data; not differentially private"
PRIVACY_UNIT = POINT.guarantee()  # the default unit's claim (a release states its own)
DROPPED_NOTE = "n_points_dropped is a private statistic for the data owner and is NOT included here"


def leaf_bounds(release: Release, grid: Grid, unwrapped: bool = False) -> np.ndarray:
    """(k, 4) lon/lat bounds (minlon, minlat, maxlon, maxlat) of every leaf.

    Longitudes are in [-180, 180]; in a bbox across the antimeridian a leaf that crosses it
    has minlon > maxlon (its west edge east of 180° reads e.g. 179.5, its east edge -179.5).
    `unwrapped=True` keeps the grid's continuous axis instead (east edges may exceed 180; what
    a map draws so the leaves stay contiguous)."""
    x0, y0, _, _ = grid.bbox
    L = release.leaves
    west = x0 + L[:, 2] * grid.cell_width
    east = x0 + L[:, 3] * grid.cell_width
    if not unwrapped:
        west, east = _normal_lon(west), _normal_lon(east)
    return np.stack(
        [west, y0 + L[:, 0] * grid.cell_height, east, y0 + L[:, 1] * grid.cell_height], axis=1
    )


def _normal_lon(lon: np.ndarray) -> np.ndarray:
    """Longitudes of the unwrapped axis back in [-180, 180] (180 itself stays 180)."""
    return np.where(lon > 180.0, lon - 360.0, lon)


def leaf_geometry(x0: float, y0: float, x1: float, y1: float) -> dict:
    """A leaf as GeoJSON: a Polygon, or a MultiPolygon cut at 180° when it crosses the
    antimeridian (x0 > x1, RFC 7946 §3.1.9)."""

    def ring(a: float, b: float) -> list:
        return [[[a, y0], [b, y0], [b, y1], [a, y1], [a, y0]]]

    if x0 > x1:
        return {"type": "MultiPolygon", "coordinates": [ring(x0, 180.0), ring(-180.0, x1)]}
    return {"type": "Polygon", "coordinates": ring(x0, x1)}


def leaf_noise_std(release: Release) -> np.ndarray | None:
    """Std of the noise in each leaf value, when the method states it (None otherwise).

    HTF states it per leaf (by the height where the leaf stopped); single-measurement methods
    (Identity, Uniform, UG, PrivTree) give one Laplace scale b for all leaves: std = sqrt(2) b.
    Methods whose leaves are post-processed combinations (AG, kd-trees, QuadTree, HTF with
    consistency) return None. Which is which is each method's `leaf_noise` in
    `core.spatial.methods.CATALOG`.
    """
    std = release.info.get("leaf_noise_std")
    if std is not None:
        return np.asarray(std, dtype=float)
    scale = release.info.get("count_noise_scale")
    row = BY_NAME.get(release.method)  # `auto` releases under the name of the method it chose
    one_scale = row is not None and row.leaf_noise is LeafNoise.ONE_SCALE
    if isinstance(scale, int | float) and one_scale:
        return np.full(release.n_leaves, math.sqrt(2) * float(scale))
    return None


def cell_area_km2(grid: Grid) -> float:
    """Approximate area of one cell (equirectangular, at the bbox's mid-latitude)."""
    mid = math.radians((grid.bbox[1] + grid.bbox[3]) / 2)
    return (grid.cell_width * 111.320 * math.cos(mid)) * (grid.cell_height * 110.574)


def metadata(release: Release, grid: Grid, noise_info: dict, bbox_from_data: bool = False) -> dict:
    meta = {
        "method": release.method,
        "label": release.info.get("label", release.method),
        "epsilon": release.epsilon,
        "grid": grid.describe(),
        "bbox": list(grid.bbox),
        "mode": noise_info.get("mode"),
        # a seed lets anyone regenerate the noise and subtract it: never in an exported file
        "noise": {k: v for k, v in noise_info.items() if k != "seed"},
        "n_leaves": release.n_leaves,
        "params": _jsonable(release.params),
        "mechanisms": charge_rows(release),
        "privacy_unit": release.unit.guarantee(),
        "unit": release.unit.to_json(),
        "note": DROPPED_NOTE,
    }
    if "height" in release.info:
        meta["height"] = int(release.info["height"])
    if bbox_from_data:
        meta["warning"] = DEMO_BBOX_LABEL
    return meta


def to_geojson(
    release: Release, grid: Grid, noise_info: dict, bbox_from_data: bool = False, colors=None
) -> dict:
    """FeatureCollection with one Polygon per leaf; properties carry the noisy count and density.

    `colors` (optional, one CSS colour per leaf) is stored as the feature property "color",
    so a map can style all leaves from one GeoJSON layer.
    """
    b = leaf_bounds(release, grid)
    L = release.leaves
    cells = release.cells_per_leaf()
    values = release.values
    dens = values / cells
    area = cells * cell_area_km2(grid)
    std = leaf_noise_std(release)
    std_l = std.tolist() if std is not None else None
    features = []
    bl, L_l, c_l, v_l, d_l, a_l = (
        b.tolist(),
        L.tolist(),
        cells.tolist(),
        values.tolist(),
        dens.tolist(),
        area.tolist(),
    )
    col = list(colors) if colors is not None else None
    for k in range(len(L_l)):
        x0, y0, x1, y1 = bl[k]
        props = {
            "row0": L_l[k][0],
            "row1": L_l[k][1],
            "col0": L_l[k][2],
            "col1": L_l[k][3],
            "noisy_count": round(v_l[k], 3),
            "cells": c_l[k],
            "density": d_l[k],
            "area_km2": round(a_l[k], 4),
        }
        if std_l is not None:
            props["noise_std"] = round(std_l[k], 3)
        if col is not None:
            props["color"] = col[k]
        features.append(
            {
                "type": "Feature",
                "geometry": leaf_geometry(x0, y0, x1, y1),
                "properties": props,
            }
        )
    return {
        "type": "FeatureCollection",
        "metadata": metadata(release, grid, noise_info, bbox_from_data),
        "features": features,
    }


def to_geojson_text(
    release: Release, grid: Grid, noise_info: dict, bbox_from_data: bool = False
) -> str:
    return json.dumps(to_geojson(release, grid, noise_info, bbox_from_data), allow_nan=False)


CSV_SIDECAR_SUFFIX = ".json"  # x.csv -> x.csv.json: the CSV's metadata, the CSV stays plain
CSV_COLUMNS = {
    "row0": "first grid row of the leaf (0 = south edge of the bbox)",
    "row1": "one past the last grid row (half-open)",
    "col0": "first grid column (0 = west edge of the bbox)",
    "col1": "one past the last grid column (half-open)",
    "minlon": "west edge (degrees; greater than maxlon when the leaf crosses the antimeridian)",
    "minlat": "south edge (degrees)",
    "maxlon": "east edge (degrees)",
    "maxlat": "north edge (degrees)",
    "noisy_count": "released noisy count of points in the leaf",
    "cells": "grid cells in the leaf",
    "density": "noisy_count / cells",
    "noise_std": "standard deviation of the noise in noisy_count (when the method states it)",
}


def to_csv_text(
    release: Release, grid: Grid, noise_info: dict, bbox_from_data: bool = False
) -> str:
    """One row per leaf with a single header row: plain CSV that `pandas.read_csv` reads as is.

    The run's metadata (method, ε, grid, mode and its warning) goes to the JSON sidecar
    (`csv_sidecar`, written as `<file>.csv.json`), never into comment lines.
    """
    b = leaf_bounds(release, grid)
    cells = release.cells_per_leaf()
    std = leaf_noise_std(release)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = [c for c in CSV_COLUMNS if c != "noise_std" or std is not None]
    w.writerow(header)
    std_l = std.tolist() if std is not None else [None] * release.n_leaves
    for (r0, r1, c0, c1), (x0, y0, x1, y1), v, c, sd in zip(
        release.leaves.tolist(), b.tolist(), release.values.tolist(), cells.tolist(), std_l,
        strict=True,
    ):  # fmt: skip
        row = [r0, r1, c0, c1, repr(x0), repr(y0), repr(x1), repr(y1), repr(v), c, repr(v / c)]
        w.writerow(row + ([repr(sd)] if std is not None else []))
    return buf.getvalue()


def csv_sidecar(
    release: Release, grid: Grid, noise_info: dict, bbox_from_data: bool = False
) -> dict:
    """The metadata of a CSV release (what the GeoJSON carries inline) plus the column meanings.

    Public only: method, ε split, grid/bbox, mode and its warning, mechanisms, privacy unit. The seed
    of a seeded run and the private point counts are never included.
    """
    return {
        **metadata(release, grid, noise_info, bbox_from_data),
        "format": "CSV, one row per leaf, one header row",
        "columns": {
            c: d
            for c, d in CSV_COLUMNS.items()
            if c != "noise_std" or leaf_noise_std(release) is not None
        },
    }


def csv_sidecar_text(
    release: Release, grid: Grid, noise_info: dict, bbox_from_data: bool = False
) -> str:
    return json.dumps(csv_sidecar(release, grid, noise_info, bbox_from_data), indent=2)


def release_file_stem(method: str, noise_info: dict) -> str:
    """A download's file name stem; a seeded (demo) release says so in its name."""
    return f"{method}-SEEDED-demo" if noise_info.get("mode") == "seeded" else method


def leaves_json(release: Release) -> list[dict]:
    """The CLI contract's leaf list: half-open cell ranges and the noisy count."""
    return [
        {"row0": r0, "row1": r1, "col0": c0, "col1": c1, "noisy_count": v}
        for (r0, r1, c0, c1), v in zip(
            release.leaves.tolist(), release.values.tolist(), strict=True
        )
    ]


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj


class RunParameters(Protocol):
    """A run's typed parameters that can state themselves as a JSON-able record (the location
    page's `ui.location.request.LocationBuildRequest`)."""

    def record(self) -> dict[str, object]: ...


def run_report(
    parameters: RunParameters, noise: Noise, grid: Grid, results: dict | None = None
) -> dict:
    """Parameters (`parameters.record()`), mode/seed (`noise.describe()`: the seed only when
    seeded), library versions and (optionally) results of a page or CLI run."""
    import platform

    import numpy
    import pandas

    import core

    versions = {
        "dp-explorer": getattr(core, "__version__", "?"),
        "python": platform.python_version(),
    }
    versions |= {"numpy": numpy.__version__, "pandas": pandas.__version__}
    try:
        import opendp

        versions["opendp"] = opendp.__version__
    except Exception:  # pragma: no cover - opendp is a dependency; the report still works
        pass
    report = {
        "parameters": _jsonable(parameters.record()),
        "noise": noise.describe(),
        "grid": grid.describe(),
        "privacy_unit": PRIVACY_UNIT,
        "versions": versions,
    }
    if results is not None:
        report["results"] = _jsonable(results)
    return report
