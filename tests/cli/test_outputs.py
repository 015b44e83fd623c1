"""Issue 29, item 4: no `dpx` command can destroy its own input.

Every output option is checked against the command's inputs, every registered dataset's files
and the live registry (symlinks and hard links included) before anything is read or charged;
and an output's format follows its extension, or the extension is refused with the list."""

from __future__ import annotations

import os

import pytest

from core.cli import main
from core.registry import Registry

POINTS = "lat,lon\n" + "".join(f"{34 + i / 100},{-118 + i / 100}\n" for i in range(40))
TABLE = "SA,x\n" + "".join(f"{'abc'[i % 3]},{i}\n" for i in range(60))
BBOX = "--bbox=-118.6,33.7,-117.2,34.6"
PP = ["--sa", "SA", "--rho1", "1/3", "--rho2", "2/3", "--perturb"]


def refused(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err


def charges(reg) -> int:
    if not (reg / "registry.sqlite").exists():
        return 0
    return len(Registry(reg).releases())


def test_balance_out_over_its_input_is_refused_before_the_charge(tmp_path, reg, capsys):
    table = tmp_path / "t.csv"
    table.write_text(TABLE)
    err = refused(capsys, ["balance", str(table), *PP, "--out", str(table)])
    assert "--out" in err and "INPUT" in err and "Fix:" in err
    assert table.read_text() == TABLE and charges(reg) == 0
    assert not (tmp_path / "t.metadata.json").exists()


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_balance_out_through_a_link_to_its_input_is_refused(tmp_path, reg, capsys, link):
    table = tmp_path / "t.csv"
    table.write_text(TABLE)
    other = tmp_path / "other.csv"
    (os.symlink if link == "symlink" else os.link)(table, other)
    refused(capsys, ["balance", str(table), *PP, "--out", str(other)])
    assert table.read_text() == TABLE and charges(reg) == 0


def test_balance_seeded_name_over_its_input_is_refused(tmp_path, reg, capsys):
    """With --seed the publication is written to NAME.SEEDED-demo-not-private.csv."""
    table = tmp_path / "t.SEEDED-demo-not-private.csv"
    table.write_text(TABLE)
    err = refused(capsys, ["balance", str(table), *PP, "--seed", "1", "--out",
                           str(tmp_path / "t.csv")])  # fmt: skip
    assert "SEEDED" in err
    assert table.read_text() == TABLE and charges(reg) == 0


def test_htf_out_over_its_input_is_refused(tmp_path, reg, capsys):
    points = tmp_path / "x.csv"
    points.write_text(POINTS)
    refused(capsys, ["htf", str(points), BBOX, "--epsilon", "1", "--out", str(points)])
    assert points.read_text() == POINTS and charges(reg) == 0


def test_release_out_over_a_registered_datasets_file_is_refused(tmp_path, reg, capsys):
    points = tmp_path / "x.csv"
    points.write_text(POINTS)
    assert main(["dataset", "add", "pts", "--table", f"p={points}", "--row-is-unit",
                 "--epsilon", "5"]) == 0  # fmt: skip
    capsys.readouterr()
    elsewhere = tmp_path / "copy.csv"
    elsewhere.write_text(POINTS)
    err = refused(capsys, ["release", str(elsewhere), "--method", "ug", BBOX, "--epsilon", "1",
                           "--out", str(points)])  # fmt: skip
    assert "registered dataset 'pts'" in err
    assert points.read_text() == POINTS and charges(reg) == 0


def test_backup_over_the_live_registry_is_refused(tmp_path, reg, capsys):
    assert main(["dataset", "list"]) == 0
    live = reg / "registry.sqlite"
    before = (live.stat().st_ino, live.read_bytes())
    err = refused(capsys, ["dataset", "backup", "--out", str(live)])
    assert "live registry" in err
    assert (live.stat().st_ino, live.read_bytes()) == before


def test_sql_export_over_its_query_file_is_refused(tmp_path, reg, capsys):
    data = tmp_path / "t.csv"
    data.write_text("uid,dept\n1,a\n2,b\n")
    query = tmp_path / "q.sql"
    text = "SELECT WITH ANONYMIZATION dept, ANON_COUNT(*, 5) AS c FROM t GROUP BY dept"
    query.write_text(text)
    argv = ["sql", "--table", f"t={data}", "--uid", "uid", "--query-file", str(query),
            "--epsilon", "1", "--delta", "1e-5", "--max-groups", "1", "--export-bigquery"]
    assert main([*argv, str(tmp_path / "elsewhere.sql")]) == 0  # the query itself exports
    refused(capsys, [*argv, str(query)])
    assert query.read_text() == text


@pytest.mark.parametrize(
    ("argv", "listed"),
    [
        (["balance", "{t}", *PP, "--out", "{d}/o.parquet"], ".csv"),
        (["htf", "{p}", BBOX, "--epsilon", "1", "--out", "{d}/o.parquet"], ".geojson, .json or .csv"),
        (["release", "{p}", "--method", "ug", BBOX, "--epsilon", "1", "--out", "{d}/o.txt"],
         ".geojson"),
        (["report", "1", "--out", "{d}/r.pdf"], ".html"),
        (["sql", "--table", "t={t}", "--uid", "SA", "--query", "SELECT 1",
          "--export-bigquery", "{d}/q.txt"], ".sql"),
    ],
)  # fmt: skip
def test_an_output_extension_the_command_does_not_write_is_refused(
    tmp_path, reg, capsys, argv, listed
):
    table, points = tmp_path / "t.csv", tmp_path / "p.csv"
    table.write_text(TABLE)
    points.write_text(POINTS)
    argv = [a.format(t=table, p=points, d=tmp_path) for a in argv]
    err = refused(capsys, argv)
    assert f"must end in {listed}" in err and "Fix:" in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["p.csv", "t.csv"]
    assert charges(reg) == 0


def test_outputs_guard_compares_resolved_paths_and_identities(tmp_path):
    from core.files import Outputs

    src = tmp_path / "a.csv"
    src.write_text("x")
    guard = Outputs()
    guard.protect(src, "INPUT")
    assert guard.clash(tmp_path / "." / "a.csv") is not None
    os.link(src, tmp_path / "b.csv")
    assert guard.clash(tmp_path / "b.csv") is not None
    assert guard.clash(tmp_path / "c.csv") is None
    (tmp_path / "c.csv").write_text("x")  # same bytes, another file
    assert guard.clash(tmp_path / "c.csv") is None


def test_an_analyst_cannot_write_over_a_registered_file_and_is_not_told_whose(
    tmp_path, reg, capsys, monkeypatch
):
    points = tmp_path / "x.csv"
    points.write_text(POINTS)
    assert main(["dataset", "add", "pts", "--table", f"p={points}", "--row-is-unit",
                 "--epsilon", "5"]) == 0  # fmt: skip
    capsys.readouterr()
    monkeypatch.setenv("DPX_MODE", "analyst")
    err = refused(capsys, ["release", "--dataset", "pts", "--method", "ug", BBOX,
                           "--epsilon", "1", "--out", str(points)])  # fmt: skip
    assert "a registered dataset's file" in err and "pts" not in err
    assert points.read_text() == POINTS and charges(reg) == 0
