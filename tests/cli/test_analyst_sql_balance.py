"""The analyst role on `dpx sql`, `dpx balance`, `dpx report`, `dpx plan` and `dpx dataset`
(issue 16): every output — stdout, --json, --out files, the report, error messages — is
rendered from release records and public parameters. A sentinel value and an exact count
are planted in a registered dataset; the owner's views show them (so the grep has teeth), no
analyst output does."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.registry import Registry
from tests.cli.conftest import run_dpx

SENTINEL = "Qzxv-sentinel-8841"  # an SA value, a dept and a text value held by few records
N = 2711  # the table's exact size: released by nothing, printed to the owner only


@pytest.fixture
def dataset(tmp_path, registry_dir, capsys):
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "person": np.arange(N),
            "dept": rng.choice(["a", "b", "c"], N),
            "amount": rng.uniform(0, 100, N).round(2),
            "sa": rng.choice(["x", "y", "z", "w"], N, p=[0.4, 0.3, 0.2, 0.1]),
            "precinct": rng.integers(1, 5, N),
            "note": ["ok"] * N,
        }
    )
    frame.loc[:2, ["sa", "dept", "note"]] = SENTINEL
    path = tmp_path / "people.csv"
    frame.to_csv(path, index=False)
    argv = ["dataset", "add", "people", "--table", f"t={path}", "--uid", "person",
            "--epsilon", "50", "--delta", "1e-3", "--pp-columns", "precinct"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    return path


def run(capsys, monkeypatch, argv, role="analyst"):
    return run_dpx(capsys, monkeypatch, argv, role)


def assert_clean(*texts: str, size_is_public: bool = False) -> None:
    """No sentinel, raw path or hash; no exact table size unless the release publishes one
    row per record (PP with declared columns: its neighbouring tables share their records)."""
    for text in texts:
        assert SENTINEL not in text
        if not size_is_public:
            assert not re.search(rf"(?<![\d.]){N}(?![\d.])", text), "the exact size leaked"
        table = Registry().dataset("people").tables[0]
        assert table.path not in text and table.sha256 not in text  # the owner's file


QUERY = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-6, "
    "max_groups_contributed = 1) dept, COUNT(*) AS c, "
    "SUM(amount, contribution_bounds_per_group => (0, 100)) AS s FROM t GROUP BY dept"
)


def test_the_owner_views_show_what_the_analyst_must_never_see(dataset, capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["balance", "--dataset", "people", "--sa", "sa",
                                             "--rho1", "0.3", "--rho2", "0.6"], role="owner")  # fmt: skip
    assert code == 0 and SENTINEL in out  # the exact plan lists the rare value and its count
    code, out, _ = run(capsys, monkeypatch, ["dataset", "show", "people", "--json"], "owner")
    assert code == 0 and Registry().dataset("people").tables[0].sha256 in out  # the file hash


@pytest.mark.parametrize("as_json", [False, True])
def test_analyst_sql_is_rendered_from_the_record(dataset, capsys, monkeypatch, as_json):
    argv = ["sql", "--dataset", "people", "--query", QUERY, *(["--json"] if as_json else [])]
    code, out, err = run(capsys, monkeypatch, argv)
    assert code == 0, err
    assert_clean(out, err)
    record = Registry().releases("people")[-1]
    if as_json:
        view = json.loads(out)
        assert view["release_id"] == record.id and view["result"] == record.artefact
        assert view["unit_column"] == "person"


def test_analyst_sql_over_a_text_column_quotes_no_value(dataset, capsys, monkeypatch):
    # CAST of a text column: a value that does not convert must not be quoted back (DuckDB's
    # own message would) and must not decide whether the query fails
    cast = QUERY.replace("SUM(amount,", "SUM(CAST(note AS DOUBLE),")
    for query in (cast, cast.replace("GROUP BY dept", "WHERE note <> 'ok' GROUP BY dept")):
        code, out, err = run(capsys, monkeypatch, ["sql", "--dataset", "people", "--query", query])
        assert code in (0, 2) and "Traceback" not in err
        assert_clean(out, err)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["sql", "--table", "t=FILE", "--uid", "person", "--query", QUERY], "--table"),
        (["sql", "--dataset", "people", "--query", QUERY, "--seed", "1"], "secure noise only"),
        (["balance", "--dataset", "people", "--sa", "sa", "--rho1", "0.3", "--rho2", "0.6"],
         "data owner"),
        (["balance", "FILE", "--sa", "sa", "--rho1", "0.3", "--rho2", "0.6", "--perturb",
          "--out", "OUT"], "registered"),
        (["balance", "--dataset", "people", "--sa", "sa", "--rho1", "0.3", "--rho2", "0.6",
          "--perturb", "--out", "OUT", "--columns", "note"], "note"),
        (["dataset", "budget", "people", "--epsilon", "99"], "owner"),
        (["dataset", "add", "x", "--table", "t=FILE", "--uid", "person", "--epsilon", "1"],
         "owner"),
    ],
)  # fmt: skip
def test_what_the_analyst_role_forbids_exits_2_with_one_line(
    dataset, capsys, monkeypatch, tmp_path, argv, words
):
    subs = {"FILE": str(dataset), "t=FILE": f"t={dataset}", "OUT": str(tmp_path / "o.csv")}
    argv = [subs.get(a, a) for a in argv]
    spent = Registry().spent("people")
    code, out, err = run(capsys, monkeypatch, argv)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert words in err and "Traceback" not in err
    assert_clean(err)
    assert Registry().spent("people") == spent  # nothing charged
    assert not (tmp_path / "o.csv").exists()


def test_analyst_publication_files_and_report_hold_no_raw_value(
    dataset, capsys, monkeypatch, tmp_path
):
    out_csv = tmp_path / "pub.csv"
    argv = ["balance", "--dataset", "people", "--sa", "sa", "--rho1", "0.3", "--rho2", "0.6",
            "--perturb", "--out", str(out_csv), "--columns", "precinct", "--missing", "drop",
            "--json"]  # fmt: skip
    code, out, err = run(capsys, monkeypatch, argv)
    assert code == 0, err
    view = json.loads(out)
    files = [p for p in tmp_path.iterdir() if p.name.startswith("pub")]
    assert {p.suffix for p in files} == {".csv", ".json"}
    published = pd.read_csv(next(p for p in files if p.suffix == ".csv"))
    assert set(published.columns) <= {"sa", "precinct", "subtable"}
    assert len(published) == N  # one row per record: PP's model makes the size public
    assert_clean(out, err, *(p.read_text() for p in files), size_is_public=True)

    report = tmp_path / "r.html"
    code, rout, rerr = run(capsys, monkeypatch, ["report", str(view["release_id"]),
                                                 "--out", str(report)])  # fmt: skip
    assert code == 0, rerr
    assert_clean(rout, rerr, report.read_text(), size_is_public=True)
    assert "precinct" in report.read_text()  # the published columns are listed


def test_analyst_dataset_views_and_plans_are_public(dataset, capsys, monkeypatch):
    for argv in (
        ["dataset", "show", "people"],
        ["dataset", "show", "people", "--json"],
        ["dataset", "list", "--json"],
        ["plan", "sql", "--dataset", "people", "--query", QUERY, "--target", "s=5000", "--json"],
        ["plan", "balance", "--dataset", "people", "--sa", "sa", "--rows", "3000",
         "--categories", "x,y,z,w", "--target-error", "0.05", "--json"],
    ):  # fmt: skip
        code, out, err = run(capsys, monkeypatch, argv)
        assert code == 0, (argv, err)
        assert_clean(out, err)
