"""GeoJSON / CSV export of a release (issue 5: release export)."""

import io
import json

import numpy as np
import pandas as pd

from core.privacy import Accountant, Cost, Noise
from core.spatial.export import csv_sidecar, to_csv_text, to_geojson, to_geojson_text
from core.spatial.grid import Grid
from core.spatial.htf import build_htf


def _release():
    F = np.random.default_rng(0).integers(0, 40, size=(16, 20))
    noise = Noise.seeded(3)
    rel = build_htf(F, 1.0, Accountant(noise, Cost(1.0)))
    return rel, Grid(16, 20, (-118.5, 33.9, -118.0, 34.3)), noise.describe()


def test_geojson_one_rectangle_per_leaf_with_bounds_and_metadata():
    rel, grid, info = _release()
    gj = json.loads(to_geojson_text(rel, grid, info))
    assert gj["type"] == "FeatureCollection"
    assert len(gj["features"]) == rel.n_leaves
    meta = gj["metadata"]
    assert meta["method"] == "htf" and meta["mode"] == "seeded"
    assert set(meta["epsilon"]) == {"total", "height", "partition", "data"}
    assert meta["grid"] == {"rows": 16, "cols": 20, "bbox": [-118.5, 33.9, -118.0, 34.3]}
    assert "NOT included" in meta["note"]
    assert "n_points_dropped" not in json.dumps({k: v for k, v in meta.items() if k != "note"})
    for feat, (r0, r1, c0, c1), v in zip(gj["features"], rel.leaves, rel.values, strict=True):
        ring = feat["geometry"]["coordinates"][0]
        xs, ys = [p[0] for p in ring], [p[1] for p in ring]
        assert np.isclose(min(xs), -118.5 + c0 * 0.025) and np.isclose(max(xs), -118.5 + c1 * 0.025)
        assert np.isclose(min(ys), 33.9 + r0 * 0.025) and np.isclose(max(ys), 33.9 + r1 * 0.025)
        p = feat["properties"]
        assert p["cells"] == (r1 - r0) * (c1 - c0)
        assert np.isclose(p["noisy_count"], v, atol=1e-3)
        assert np.isclose(p["density"], v / p["cells"])


def test_demo_bbox_label_and_colors():
    rel, grid, info = _release()
    gj = to_geojson(rel, grid, info, bbox_from_data=True, colors=["#000000"] * rel.n_leaves)
    assert gj["metadata"]["warning"].startswith("DEMO")
    assert gj["features"][0]["properties"]["color"] == "#000000"


def test_csv_round_trip():
    rel, grid, info = _release()
    text = to_csv_text(rel, grid, info)
    assert "#" not in text  # plain CSV: the metadata lives in the sidecar
    meta = csv_sidecar(rel, grid, info)
    assert meta["mode"] == "seeded" and "not for real releases" in meta["noise"]["warning"]
    df = pd.read_csv(io.StringIO(text))
    assert set(meta["columns"]) == set(df.columns)
    assert len(df) == rel.n_leaves
    np.testing.assert_allclose(df["noisy_count"], rel.values)
    assert (df["cells"] == rel.cells_per_leaf()).all()


def test_noise_std_is_exported_when_stated():
    rel, grid, info = _release()
    gj = to_geojson(rel, grid, info)
    stds = [f["properties"]["noise_std"] for f in gj["features"]]
    np.testing.assert_allclose(stds, rel.info["leaf_noise_std"], atol=1e-3)
    df = pd.read_csv(io.StringIO(to_csv_text(rel, grid, info)))
    np.testing.assert_allclose(df["noise_std"], rel.info["leaf_noise_std"])
    F = np.random.default_rng(0).integers(0, 40, size=(16, 20))
    cons = build_htf(F, 1.0, Accountant(Noise.seeded(3)), consistency=True)
    assert "noise_std" not in to_geojson(cons, grid, info)["features"][0]["properties"]
    assert "noise_std" not in to_csv_text(cons, grid, info)
