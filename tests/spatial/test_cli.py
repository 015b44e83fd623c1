"""`dpx htf` and `dpx compare`: the CLI contract of issue 5, exactly as written there."""

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main

BBOX = "-118.6,33.7,-117.9,34.4"


@pytest.fixture(scope="module")
def points_csv(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 20_000
    df = pd.DataFrame(
        {
            "Latitude": np.clip(rng.normal(34.05, 0.06, n), 33.71, 34.39),
            "Longitude": np.clip(rng.normal(-118.25, 0.06, n), -118.59, -117.91),
            "name": ["p"] * n,
        }
    )
    path = tmp_path_factory.mktemp("pts") / "points.csv"
    df.to_csv(path, index=False)
    return path


def run_json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_htf_json_contract(points_csv, capsys):
    res = run_json(
        capsys,
        ["htf", str(points_csv), "--lat", "Latitude", "--lon", "Longitude", "--bbox", BBOX,
         "--grid", "64", "--epsilon", "0.5", "--json"],
    )  # fmt: skip
    assert res["method"] == "htf"
    assert res["mode"] == "secure"
    eps = res["epsilon"]
    assert eps["total"] == 0.5
    assert abs(eps["height"] + eps["partition"] + eps["data"] - eps["total"]) <= 1e-12
    assert eps["height"] == 1e-4 and eps["partition"] == pytest.approx(res["height"] * 1e-3)
    assert isinstance(res["height"], int) and res["height"] >= 1
    assert res["grid"] == {"rows": 64, "cols": 64, "bbox": [-118.6, 33.7, -117.9, 34.4]}
    assert res["n_points_used"] + res["n_points_dropped"] == 20_000
    cover = np.zeros((64, 64), dtype=int)
    for leaf in res["leaves"]:
        assert set(leaf) >= {"row0", "row1", "col0", "col1", "noisy_count"}
        cover[leaf["row0"] : leaf["row1"], leaf["col0"] : leaf["col1"]] += 1
    assert (cover == 1).all()  # the leaves tile the grid exactly


def test_htf_seeded_mode_grid_cols_and_parameters(points_csv, capsys):
    argv = ["htf", str(points_csv), "--bbox", BBOX, "--grid", "32", "--grid-cols", "48",
            "--epsilon", "1", "--eps-height", "0.01", "--eps-prt-level", "0.002", "--T", "2",
            "--stop-count", "50", "--stop-cells", "8", "--seed", "7", "--json"]  # fmt: skip
    a = run_json(capsys, argv)
    b = run_json(capsys, argv)
    assert a["mode"] == "seeded" and a["noise"]["seed"] == 7
    assert a["leaves"] == b["leaves"]  # reproducible
    assert (a["grid"]["rows"], a["grid"]["cols"]) == (32, 48)
    assert a["epsilon"]["height"] == 0.01
    assert a["epsilon"]["partition"] == pytest.approx(a["height"] * 0.002)
    assert sum((x["row1"] - x["row0"]) * (x["col1"] - x["col0"]) for x in a["leaves"]) == 32 * 48


def test_demo_mode_derives_bbox_and_says_so(points_csv, capsys):
    res = run_json(
        capsys, ["htf", str(points_csv), "--epsilon", "1", "--seed", "1", "--grid", "16", "--json"]
    )
    assert res["warning"].startswith("DEMO — bounding box derived from the data")
    assert res["n_points_dropped"] == 0


def test_out_files(points_csv, tmp_path, capsys):
    gj = tmp_path / "r.geojson"
    res = run_json(capsys, ["htf", str(points_csv), "--bbox", BBOX, "--grid", "32", "--epsilon", "1",
                            "--seed", "2", "--out", str(gj), "--json"])  # fmt: skip
    data = json.loads(gj.read_text())
    assert len(data["features"]) == len(res["leaves"])
    assert data["metadata"]["mode"] == "seeded"
    csv = tmp_path / "r.csv"
    assert (
        main(
            [
                "htf",
                str(points_csv),
                "--bbox",
                BBOX,
                "--grid",
                "32",
                "--epsilon",
                "1",
                "--out",
                str(csv),
            ]
        )
        == 0
    )
    df = pd.read_csv(csv)  # plain CSV: no comment lines, one header row
    assert len(df) > 0 and "noisy_count" in df.columns
    assert not csv.read_text().startswith("#")
    meta = json.loads((tmp_path / "r.csv.json").read_text())  # the metadata sidecar
    assert meta["mode"] == "secure" and meta["n_leaves"] == len(df)
    assert set(meta["columns"]) == set(df.columns)


def test_seeded_csv_sidecar_is_labelled_and_omits_the_seed(points_csv, tmp_path, capsys):
    csv = tmp_path / "s.csv"
    res = run_json(capsys, ["htf", str(points_csv), "--bbox", BBOX, "--grid", "32", "--epsilon",
                            "1", "--seed", "987654", "--out", str(csv), "--json"])  # fmt: skip
    assert res["metadata"] == f"{csv}.json"
    sidecar = (tmp_path / "s.csv.json").read_text()
    assert "not for real releases" in json.loads(sidecar)["noise"]["warning"]
    assert "987654" not in sidecar and "987654" not in csv.read_text()


def test_unwritable_out_leaves_no_partial_file(points_csv, tmp_path, capsys):
    out = tmp_path / "no-such-dir" / "r.csv"
    argv = ["htf", str(points_csv), "--bbox", BBOX, "--grid", "32", "--epsilon", "1"]
    assert "cannot write" in _err(capsys, [*argv, "--out", str(out)])
    assert not out.parent.exists()


def test_region_instead_of_bbox(points_csv, capsys):
    res = run_json(capsys, ["htf", str(points_csv), "--region", "los-angeles", "--grid", "32",
                            "--epsilon", "1", "--seed", "1", "--json"])  # fmt: skip
    from core.spatial.regions import region_bbox

    assert res["grid"]["bbox"] == list(region_bbox("los-angeles"))
    assert "warning" not in res  # a named public region, not derived from the data
    assert "unknown region" in _err(
        capsys, ["htf", str(points_csv), "--region", "atlantis", "--epsilon", "1"]
    )
    both = ["htf", str(points_csv), "--region", "world", "--bbox", BBOX, "--epsilon", "1"]
    assert "not both" in _err(capsys, both)


def test_compare_help_describes_and_lists_methods(capsys):
    from core.spatial.methods import LABELS, METHODS

    with pytest.raises(SystemExit) as exc:
        main(["compare", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "mean relative error" in text and "NOT differentially private" in text
    for name in METHODS:
        assert f"  {name} " in text and LABELS[name] in text
    assert "default 1024" in text  # one default grid for CLI and app, with the reason


def test_parquet_input(points_csv, tmp_path, capsys):
    pq = tmp_path / "p.parquet"
    pd.read_csv(points_csv).to_parquet(pq)
    res = run_json(
        capsys, ["htf", str(pq), "--bbox", BBOX, "--grid", "16", "--epsilon", "1", "--json"]
    )
    assert res["n_points_used"] > 0


def test_compare_json_contract(points_csv, capsys):
    res = run_json(
        capsys,
        ["compare", str(points_csv), "--lat", "Latitude", "--lon", "Longitude", "--bbox", BBOX,
         "--grid", "64", "--epsilon", "0.5", "--methods", "htf,ug,uniform", "--queries", "100",
         "--query-sizes", "0.02,0.1", "--reps", "2", "--smoothing", "20", "--seed", "3", "--json"],
    )  # fmt: skip
    assert res["grid"]["rows"] == 64 and res["n_points_used"] > 0
    rows = res["results"]
    assert [(r["method"], r["query_size"]) for r in rows] == [
        (m, f) for m in ("htf", "ug", "uniform") for f in (0.02, 0.1)
    ]
    for r in rows:
        assert set(r) >= {"method", "query_size", "mre", "mre_std", "build_seconds"}
        assert r["mre"] >= 0 and r["mre_std"] >= 0 and r["build_seconds"] >= 0


def _err(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("dpx: error:") and len(err.strip().splitlines()) == 1
    return err


def _write(tmp_path, df, name="x.csv"):
    p = tmp_path / name
    df.to_csv(p, index=False)
    return str(p)


def test_secure_mode_without_bbox_asks_for_it(points_csv, capsys):
    err = _err(capsys, ["htf", str(points_csv), "--epsilon", "1"])
    assert "--bbox" in err


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--epsilon", "0"], "epsilon"),
        (["--epsilon", "-1"], "epsilon"),
        (["--epsilon", "0.01", "--eps-prt-level", "0.01"], "nothing for the counts"),
        (["--epsilon", "1", "--grid", "5000"], "grid"),
        (["--epsilon", "1", "--bbox", "-118,34,-119,35"], "swapped"),
        (["--epsilon", "1", "--bbox", "1,2,3"], "four numbers"),
        (["--epsilon", "1", "--bbox", "0,0,1,1"], "outside the bounding box"),
        (["--epsilon", "1", "--lat", "nope"], "nope"),
    ],
)
def test_bad_parameters_exit_2(points_csv, capsys, extra, needle):
    argv = ["htf", str(points_csv), "--bbox", BBOX, *extra] if "--bbox" not in extra else [
        "htf", str(points_csv), *extra]  # fmt: skip
    assert needle in _err(capsys, argv)


def test_bad_data_exit_2(tmp_path, capsys):
    few = _write(
        tmp_path, pd.DataFrame({"lat": [34.0] * 5, "lon": [-118.2, -118.3, -118.1, -118.0, -118.4]})
    )
    assert "at least 10" in _err(capsys, ["htf", few, "--bbox", BBOX, "--epsilon", "1"])
    same = _write(tmp_path, pd.DataFrame({"lat": [34.0] * 20, "lon": [-118.2] * 20}), "same.csv")
    assert "identical" in _err(capsys, ["htf", same, "--bbox", BBOX, "--epsilon", "1"])
    text = _write(tmp_path, pd.DataFrame({"lat": ["a"] * 20, "lon": [-118.2] * 20}), "text.csv")
    assert "no row has a usable" in _err(capsys, ["htf", text, "--bbox", BBOX, "--epsilon", "1"])
    nocols = _write(tmp_path, pd.DataFrame({"a": [1.0] * 20, "b": [2.0] * 20}), "nocols.csv")
    assert "latitude" in _err(capsys, ["htf", nocols, "--bbox", BBOX, "--epsilon", "1"])
    assert "not found" in _err(
        capsys, ["htf", str(tmp_path / "missing.csv"), "--bbox", BBOX, "--epsilon", "1"]
    )
    assert "unknown method" in _err(
        capsys, ["compare", few, "--bbox", BBOX, "--epsilon", "1", "--methods", "htf,nope"]
    )
