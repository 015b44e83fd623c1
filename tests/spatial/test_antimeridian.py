"""Bounding boxes across the antimeridian (issue 20, Build 6): MINLON > MAXLON means the box runs
east from MINLON over 180° to MAXLON. Binning, the grid, exports, the map and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.errors import InputError
from core.privacy import Accountant, Cost, Noise
from core.spatial.export import leaf_bounds, to_csv_text, to_geojson
from core.spatial.grid import Grid, bin_points
from core.spatial.methods import get_method
from core.spatial.queries import geo_to_cells
from core.spatial.regions import check_bbox, region_bbox
from core.spatial.release import Release
from core.viz.basemap import reference_layers
from core.viz.spatial import release_map

FIJI = (176.8, -19.3, -178.2, -15.6)  # 5 degrees wide across 180


def test_the_grid_runs_across_180():
    g = Grid(10, 10, FIJI)
    assert g.wraps and g.width == pytest.approx(5.0) and g.east == pytest.approx(181.8)
    assert g.cell_width == pytest.approx(0.5)
    lon = np.array([176.8, 179.9, 180.0, -180.0, -179.9, -178.2, -178.1, 176.7, 0.0])
    lat = np.full(lon.size, -17.0)
    b = bin_points(lon, lat, g)
    assert b.n_used == 6 and b.n_dropped == 3  # -178.1, 176.7 and 0 are outside
    cols = np.flatnonzero(b.F.sum(axis=0))
    assert cols.tolist() == [0, 6, 9]  # 176.8 -> 0; 179.9/180/-180/-179.9 -> 6; -178.2 -> 9
    assert b.F[:, 6].sum() == 4


def test_equal_to_the_same_box_on_a_shifted_axis():
    """Binning across 180 equals binning the same points with longitudes shifted by +360
    east of 180 in an ordinary box (176.8..181.8): nothing is lost at the seam."""
    rng = np.random.default_rng(0)
    lon = rng.uniform(176.0, 182.5, 20_000)
    lat = rng.uniform(-20, -15, 20_000)
    wrapped = np.where(lon > 180, lon - 360, lon)
    a = bin_points(wrapped, lat, Grid(64, 64, FIJI))
    b = bin_points(lon, lat, Grid(64, 64, (176.8, -19.3, 181.8, -15.6)))
    assert np.array_equal(a.F, b.F) and a.n_used == b.n_used


def test_bbox_checks_accept_a_wrap_and_refuse_nonsense():
    assert check_bbox(FIJI) == FIJI and region_bbox("fiji") == FIJI
    for bad in [(10, 0, 10, 1), (0, 1, 5, 0), (190, 0, 5, 1), (5, 0, -190, 1)]:
        with pytest.raises(InputError):
            check_bbox(bad)
    with pytest.raises(InputError, match="swapped"):  # 359° wide: a typo, not a wrap
        check_bbox((-118.0, 34.0, -119.0, 35.0))
    with pytest.raises(InputError):
        Grid(4, 4, (10.0, 0.0, 10.0, 1.0))


def test_exports_normalise_longitudes_and_cut_leaves_at_180():
    g = Grid(2, 4, FIJI)  # columns: 176.8-178.05, -179.3 (crosses), 179.55-..., ...
    leaves = np.array([[0, 2, 0, 2], [0, 2, 2, 3], [0, 1, 3, 4], [1, 2, 3, 4]])
    rel = Release("t", leaves, np.array([5.0, 1.0, 2.0, 3.0]), {"total": 1.0}, ())
    b = leaf_bounds(rel, g)
    assert np.all((b[:, [0, 2]] >= -180) & (b[:, [0, 2]] <= 180))
    assert b[0, 0] == pytest.approx(176.8) and b[0, 2] == pytest.approx(179.3)
    assert b[1, 0] == pytest.approx(179.3) and b[1, 2] == pytest.approx(-179.45)  # crosses
    gj = to_geojson(rel, g, {"mode": "seeded"})
    geoms = [f["geometry"] for f in gj["features"]]
    assert geoms[0]["type"] == "Polygon"
    assert geoms[1]["type"] == "MultiPolygon"
    xs = [p[0] for poly in geoms[1]["coordinates"] for p in poly[0]]
    assert max(xs) == 180.0 and min(xs) == -180.0
    assert gj["metadata"]["grid"]["crosses_antimeridian"] is True
    csv = pd.read_csv(__import__("io").StringIO(to_csv_text(rel, g, {"mode": "seeded"})))
    assert csv.loc[1, "minlon"] > csv.loc[1, "maxlon"]  # documented: the leaf crosses 180
    assert geo_to_cells((179.0, -19.3, -179.0, -15.6), FIJI, 2, 4) == (0, 2, 2, 3)


def test_the_map_draws_contiguous_leaves_and_shifted_boundaries():
    F = np.random.default_rng(1).poisson(3, size=(32, 32))
    rel = get_method("ug")(F, 1.0, Accountant(Noise.seeded(1), Cost(1.0)))
    g = Grid(32, 32, FIJI)
    m, _ = release_map({"ug": rel}, g, {})
    html = m.get_root().render()
    assert '"x0": 176.8' in html and "181.8" in html  # fitted to the unwrapped east edge
    layers = reference_layers(FIJI)
    fiji = [f for f in layers.countries["features"] if f["properties"]["name"] == "Fiji"]
    xs = [p[0] for f in fiji for poly in f["geometry"]["coordinates"] for p in poly[0]]
    assert xs and min(xs) >= 176.8 - 2.5 and max(xs) > 180  # east of 180 drawn at 180+
    assert any(name == "Suva" for _, _, name, _ in layers.places)


def test_cli_release_across_the_antimeridian(tmp_path, capsys):
    rng = np.random.default_rng(3)
    lon = rng.normal(179.5, 0.8, 3000)
    lon = np.where(lon > 180, lon - 360, lon)
    path = tmp_path / "fiji.csv"
    pd.DataFrame({"lat": rng.normal(-17.5, 0.5, 3000), "lon": lon}).to_csv(path, index=False)
    out = tmp_path / "r.geojson"
    code = main(["release", str(path), "--region", "fiji", "--grid", "64", "--epsilon", "1",
                 "--method", "ug", "--seed", "1", "--out", str(out), "--json"])  # fmt: skip
    res = json.loads(capsys.readouterr().out)
    assert code == 0 and res["n_points_used"] > 2500 and res["grid"]["crosses_antimeridian"]
    gj = json.loads(out.read_text())
    assert any(f["geometry"]["type"] == "MultiPolygon" for f in gj["features"])
