"""`dpx sql` contract exactly as the issue writes it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.cli import main

QUERY = (
    "SELECT WITH ANONYMIZATION dept, ANON_COUNT(*, 5) AS c, ANON_SUM(amount, 0, 100) AS s "
    "FROM Employee E JOIN Orders O USING (uid) GROUP BY dept"
)


@pytest.fixture
def files(tmp_path):
    emp = pd.DataFrame({"uid": range(1, 61), "dept": ["HR"] * 30 + ["Sales"] * 29 + ["IT"] * 1})
    orders = pd.DataFrame({"uid": list(range(1, 61)) * 2, "amount": [10.0, 30.0] * 60})
    depts = pd.DataFrame({"dept": ["HR", "Sales", "IT"], "floor": [1, 2, 3]})
    emp.to_csv(tmp_path / "emp.csv", index=False)
    orders.to_parquet(tmp_path / "orders.parquet")
    depts.to_csv(tmp_path / "depts.csv", index=False)
    return tmp_path


def base(files, *extra):
    return [
        "sql", "--table", f"Employee={files / 'emp.csv'}",
        "--table", f"Orders={files / 'orders.parquet'}", "--uid", "uid", *extra,
    ]  # fmt: skip


def run_json(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 else None), out.err


def test_json_contract(files, capsys):
    argv = base(files, "--query", QUERY, "--epsilon", "1e9", "--delta", "0.1",
                "--max-groups", "1", "--seed", "3", "--json")  # fmt: skip
    code, out, _ = run_json(capsys, argv)
    assert code == 0
    for key in ("columns", "rows", "ci95", "threshold", "partitions_released", "ledger",
                "epsilon_spent", "delta_spent", "mode"):  # fmt: skip
        assert key in out
    assert out["columns"] == ["dept", "c", "s"]
    assert set(out["ci95"]) == {"c", "s"}
    assert out["mode"] == "seeded"
    assert isinstance(out["threshold"]["tau"], float)
    assert isinstance(out["threshold"]["integer"], int)
    assert out["partitions_released"] == len(out["rows"]) == 2  # IT (1 unit) never passes
    rows = {r[0]: r for r in out["rows"]}
    assert rows["HR"][1] == pytest.approx(60, abs=0.5)
    assert rows["HR"][2] == pytest.approx(1200, abs=0.5)
    assert all(len(v) == len(out["rows"]) for v in out["ci95"].values())
    assert {"mechanism", "epsilon", "delta"} <= set(out["ledger"][0])
    assert out["epsilon_spent"] == pytest.approx(1e9)
    assert out["delta_spent"] == pytest.approx(0.1)
    assert "rewritten_sql" not in out
    record = out["query_record"]
    assert record["threshold"] == out["threshold"]["integer"] and record["status"] == "charged"
    assert len(record["query_sha256"]) == 64


def test_query_options_take_precedence(files, capsys):
    q = QUERY.replace("ANONYMIZATION", "ANONYMIZATION OPTIONS (epsilon = 2, delta = 1e-4, "
                      "max_groups_contributed = 1)")  # fmt: skip
    argv = base(files, "--query", q, "--epsilon", "5", "--delta", "0.1", "--max-groups", "3",
                "--seed", "1", "--json")  # fmt: skip
    code, out, _ = run_json(capsys, argv)
    assert code == 0
    assert out["epsilon_spent"] == pytest.approx(2)
    assert out["delta_spent"] == pytest.approx(1e-4)


@pytest.mark.parametrize("dialect", ["duckdb", "spark", "bigquery", "postgres"])
def test_explain_gives_rewritten_sql_in_dialect(files, capsys, dialect):
    qf = files / "q.sql"
    qf.write_text(QUERY)
    argv = base(files, "--query-file", str(qf), "--epsilon", "1", "--delta", "1e-5",
                "--max-groups", "1", "--seed", "1", "--explain", "--dialect", dialect, "--json")  # fmt: skip
    code, out, _ = run_json(capsys, argv)
    assert code == 0
    assert "cross_user" in out["rewritten_sql"]
    assert ("RAND()" in out["rewritten_sql"]) == (dialect in ("spark", "bigquery"))


def test_public_table(files, capsys):
    q = ("SELECT WITH ANONYMIZATION floor, ANON_COUNT(*, 5) AS c FROM Employee E "
         "JOIN Depts D ON E.dept = D.dept GROUP BY floor")  # fmt: skip
    argv = base(files, "--public", f"Depts={files / 'depts.csv'}", "--query", q, "--epsilon",
                "1e9", "--delta", "0.1", "--max-groups", "1", "--seed", "1", "--json")  # fmt: skip
    code, out, _ = run_json(capsys, argv)
    assert code == 0 and out["columns"] == ["floor", "c"]


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("SELECT WITH ANONYMIZATION uid FROM Employee", "DPX-V028"),
        ("SELECT * FROM Employee; DROP TABLE Employee", "DPX-S001"),
        ("SELECT WITH ANONYMIZATION ANON_COUNT(*, 1) FROM read_csv('/etc/passwd')", "DPX-S003"),
        ("ATTACH 'x.db'", "DPX-S002"),
    ],
)
def test_refused_query_exits_2_with_reason(files, capsys, query, fragment):
    argv = base(files, "--query", query, "--epsilon", "1", "--delta", "1e-5", "--max-groups", "1")
    code, _, err = run_json(capsys, argv)
    assert code == 2
    assert fragment in err


def test_budget_epsilon_refuses_a_bigger_query(files, capsys):
    argv = base(files, "--query", QUERY, "--epsilon", "2", "--delta", "1e-5", "--max-groups",
                "1", "--budget-epsilon", "1", "--json")  # fmt: skip
    code, out, err = run_json(capsys, argv)
    assert code == 2
    assert "DPX-B001" in err and "budget" in err and out is None
    argv = base(files, "--query", QUERY, "--epsilon", "1", "--delta", "1e-5", "--max-groups",
                "1", "--budget-epsilon", "1", "--seed", "2", "--json")  # fmt: skip
    code, out, _ = run_json(capsys, argv)
    assert code == 0


def test_secure_mode_without_seed(files, capsys):
    argv = base(files, "--query", QUERY, "--epsilon", "1", "--delta", "1e-5", "--max-groups",
                "1", "--json")  # fmt: skip
    code, out, _ = run_json(capsys, argv)
    assert code == 0 and out["mode"] == "secure"


def test_dry_run_reads_no_data_and_charges_nothing(files, capsys):
    argv = base(files, "--query", QUERY, "--epsilon", "1", "--delta", "1e-5", "--max-groups",
                "1", "--dry-run", "--json")  # fmt: skip
    code, out, _ = run_json(capsys, argv)
    assert code == 0
    assert "ledger" not in out and out["threshold"]["integer"] >= 1
    assert len(out["survival_curve"]) > 5


def test_missing_table_file_is_a_clean_error(files, capsys):
    argv = ["sql", "--table", f"E={files / 'nope.csv'}", "--uid", "uid", "--query", QUERY]
    code, _, err = run_json(capsys, argv)
    assert code == 2 and err


def test_export_bigquery_round_trips(files, capsys):
    out_file = files / "bq.sql"
    argv = base(files, "--query", QUERY, "--epsilon", "1", "--delta", "1e-5", "--max-groups",
                "2", "--export-bigquery", str(out_file), "--json")  # fmt: skip
    code, out, _ = run_json(capsys, argv)
    assert code == 0 and out["warnings"] == []
    text = out_file.read_text()
    assert text.startswith("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-05, "
                           "max_groups_contributed = 2, privacy_unit_column = uid)")  # fmt: skip
    assert "COUNT(*, contribution_bounds_per_group => (0, 5)) AS c" in text
    assert "SUM(amount, contribution_bounds_per_group => (0, 100)) AS s" in text
    # the export is itself a valid query for this engine, with the same aggregates
    argv = base(files, "--query-file", str(out_file), "--seed", "1", "--json")
    code, again, _ = run_json(capsys, argv)
    assert code == 0 and again["columns"] == ["dept", "c", "s"]


def test_limit_and_cap_flags_are_in_one_argument_builder():
    """Later flags (e.g. --dataset) extend `add_arguments`; the limits and caps live there."""
    import argparse

    from core.cli.sql import add_arguments

    p = argparse.ArgumentParser()
    add_arguments(p)
    args = p.parse_args(["--uid", "u", "--query", "q"])
    assert args.timeout is None  # the default is decided from the tables (time_limit)
    assert args.max_epsilon_per_query is None and args.max_delta_per_query is None
    args = p.parse_args(["--uid", "u", "--query", "q", "--timeout", "5",
                         "--max-epsilon-per-query", "2", "--max-delta-per-query", "1e-6"])  # fmt: skip
    assert (args.timeout, args.max_epsilon_per_query, args.max_delta_per_query) == (5, 2, 1e-6)


def test_json_output_is_strict_json_with_quantiles(files, capsys):
    """Quantiles have no interval (None) and no value may be NaN: the output parses strictly."""
    q = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e6, delta = 0.1, max_groups_contributed = 1)"
        " dept, ANON_MEDIAN(amount, 0, 100) AS med FROM Employee E JOIN Orders O USING (uid) "
        "GROUP BY dept"
    )
    code = main(base(files, "--query", q, "--seed", "2", "--json"))
    out = capsys.readouterr().out
    assert code == 0

    def refuse_constant(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    result = json.loads(out, parse_constant=refuse_constant)
    assert result["ci95"]["med"] == [None] * len(result["rows"])


def test_unreadable_query_file_and_unwritable_export_are_clean_errors(files, capsys):
    binary = files / "query.sql"
    binary.write_bytes(b"\xff\xfe\x00SELECT")
    assert main(base(files, "--query-file", str(binary))) == 2
    err = capsys.readouterr().err
    assert "not UTF-8" in err and "Traceback" not in err
    target = files / "missing-dir" / "out.sql"
    flags = ("--epsilon", "1", "--delta", "1e-5", "--max-groups", "1")
    assert main(base(files, "--query", QUERY, *flags, "--export-bigquery", str(target))) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and not target.parent.exists()


@pytest.mark.parametrize(
    ("flag", "value", "fragment"),
    [("--budget-epsilon", "-1", "--budget-epsilon"), ("--budget-epsilon", "nan", "--budget-epsilon"),
     ("--seed", "-5", "--seed"), ("--max-delta-per-query", "1", "max_delta_per_query")],
)  # fmt: skip
def test_bad_flag_values_are_one_line_refusals(files, capsys, flag, value, fragment):
    assert main(base(files, "--query", QUERY, f"{flag}={value}")) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
