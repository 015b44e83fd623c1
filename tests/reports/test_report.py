"""`dpx report`: one self-contained HTML file per release, figures inline, nothing external."""

import json
import re
from pathlib import Path

import pytest

from core.cli import main
from core.registry import Mechanism, Policy, Registry
from tests.registry.helpers import BBOX, QUERY, write_points


def _run(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _report(capsys, release_id, path: Path) -> str:
    _run(capsys, ["report", str(release_id), "--out", str(path)])
    return path.read_text(encoding="utf-8")


def assert_self_contained(html: str) -> None:
    tags = re.findall(r"<[^>]*>", html)
    assert not [t for t in tags if re.search(r"https?:|//|src=|href=", t)], "external reference"
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert "url(" not in html


@pytest.fixture
def released(capsys, registry_dir, tmp_path) -> dict:
    points = write_points(tmp_path / "pts.csv")
    _run(capsys, ["dataset", "add", "pts", "--table", f"t={points}", "--uid", "uid",
                  "--epsilon", "5", "--delta", "1e-5"])  # fmt: skip
    return {
        "htf": _run(capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX, "--epsilon", "1"]),
        "sql": _run(capsys, ["sql", "--dataset", "pts", "--query", QUERY.format(eps=1)]),
        "pp": _run(capsys, ["balance", "--dataset", "pts", "--sa", "sa", "--rho1", "0.3",
                            "--rho2", "0.7", "--perturb", "--plan-epsilon", "0.5",
                            "--categories", "a,b,c,d", "--out", str(tmp_path / "pub.csv")]),
    }  # fmt: skip


def test_htf_report_draws_every_leaf(capsys, released, tmp_path):
    out = released["htf"]
    html = _report(capsys, out["registry"]["release_id"], tmp_path / "htf.html")
    assert_self_contained(html)
    svg = re.search(r'<svg class="figure leaves-map".*?</svg>', html, re.S).group(0)
    assert svg.count('<rect class="leaf"') == out["n_leaves"]
    assert "(1, 0)-differential privacy" in html and "each person (at most 1 point;" in html
    for word in ("What it does not mean", "Mechanisms", "95% half-width", "Versions", "secure"):
        assert word in html


def test_sql_report_has_bars_table_intervals_and_survival(capsys, released, tmp_path):
    out = released["sql"]
    html = _report(capsys, out["registry"]["release_id"], tmp_path / "sql.html")
    assert_self_contained(html)
    bars = re.search(r'<svg class="figure bar-chart".*?</svg>', html, re.S).group(0)
    assert bars.count("<rect") == len(out["rows"])
    for row, (lo, hi) in zip(out["rows"], out["intervals95"]["n"], strict=True):
        assert f"<td>{row[0]}</td>" in html and f"[{lo:.4g}, {hi:.4g}]" in html
    assert f"T = {out['threshold']['integer']}" in html and "P(released)" in html
    assert "(1, 1e-06)-differential privacy" in html and "column uid" in html


def test_pp_report_states_the_claim_columns_and_retention(capsys, released, tmp_path):
    html = _report(capsys, released["pp"]["registry"]["release_id"], tmp_path / "pp.html")
    assert_self_contained(html)
    assert "(3/10, 7/10)-privacy</b>" in html and "not ε-differential privacy" in html
    assert "planned from noisy counts: ε = 0.5" in html
    assert "the columns <b>sa, subtable</b>" in html and "retention p" in html
    assert "nothing to draw" not in html


def test_seeded_demo_run_is_labelled(capsys, registry_dir, tmp_path):
    points = write_points(tmp_path / "p.csv")
    out = _run(capsys, ["htf", str(points), BBOX, "--epsilon", "1", "--seed", "3"])
    assert out["registry"]["kind"] == "demo"  # recorded as a labelled demo run, not charged
    reg = Registry(registry_dir)
    run = reg.releases()[-1]
    html = _report(capsys, run.id, tmp_path / "demo.html")
    assert "not for real releases" in html and "carries <b>no</b> privacy guarantee" in html


def test_values_are_escaped(capsys, registry_dir, tmp_path):
    table = write_points(tmp_path / "p.csv")
    reg = Registry(registry_dir)
    reg.add_dataset("d", [("t", table)], Policy(1.0))
    rel = reg.charge(
        "sql", "d", {"query": "<script>alert(1)</script>"}, [Mechanism("m", 0.5)], "secure"
    )
    reg.attach(rel.id, {"columns": ["<b>x</b>"], "rows": [["<i>y</i>"]], "ci95": {}})
    html = _report(capsys, rel.id, tmp_path / "e.html")
    assert "<script" not in html and "<i>y" not in html and "&lt;script&gt;" in html


def test_bad_requests_exit_2_and_write_nothing(capsys, registry_dir, tmp_path):
    assert main(["report", "1", "--out", str(tmp_path / "x.html")]) == 2
    assert "no release with id 1" in capsys.readouterr().err
    assert main(["report", "abc", "--out", str(tmp_path / "x.html")]) == 2
    assert main(["report", "1", "--out", str(tmp_path / "x.txt")]) == 2
    assert "must end in .html" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if p.name != "registry"] == []


def test_failure_details_are_withheld(capsys, registry_dir, tmp_path):
    table = write_points(tmp_path / "p.csv")
    reg = Registry(registry_dir)
    reg.add_dataset("d", [("t", table)], Policy(1.0))
    rel = reg.charge("htf", "d", {}, [Mechanism("m", 0.5)], "secure")
    reg.fail(rel.id, "value 'PRIVATE-123' is not a number")
    html = _report(capsys, rel.id, tmp_path / "f.html")
    assert "PRIVATE-123" not in html and "failed" in html and "No result is attached" in html
