"""Every crash of the issue-9 audit is a refusal (exit 2, rule code, fix) or a correct result,
and no traceback ever leaves `dpx sql` (top-level guard, charge stated when data was read)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import core.dpsql.service as service
from core.cli import main

OPTS = "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2)"
EXACT = "OPTIONS (epsilon = 1e9, delta = 0.1, max_groups_contributed = 1)"


@pytest.fixture
def files(tmp_path):
    n = 60
    users = pd.DataFrame(
        {
            "uid": range(n),
            "dept": ["HR", "IT"] * (n // 2),
            "salary": np.linspace(10, 100, n),
            "day": [dt.date(2024, 1, 1 + i % 2) for i in range(n)],
            "at": pd.to_datetime(["2024-01-01 10:00", "2024-01-02 11:30"] * (n // 2)),
        }
    )
    users.to_parquet(tmp_path / "users.parquet")
    return tmp_path


def dpx(files, capsys, query, *extra):
    argv = ["sql", "--table", f"Users={files / 'users.parquet'}", "--uid", "uid",
            "--query", query, *extra]  # fmt: skip
    code = main(argv)
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out


def refused(files, capsys, query, code_fragment, *extra):
    code, out = dpx(files, capsys, query, *extra)
    assert code == 2, out.out
    line = out.err.strip()
    assert len(line.splitlines()) == 1 and line.startswith("dpx: error: DPX-")
    assert code_fragment in line
    return line


def test_delta_denormal_with_two_groups_is_refused(files, capsys):
    q = "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 5e-324, max_groups_contributed = 2) dept, ANON_COUNT(*, 1) AS c FROM Users GROUP BY dept"  # noqa: E501
    assert "Fix" in refused(files, capsys, q, "DPX-V031")


@pytest.mark.parametrize("placeholder", ["?", "$1", ":threshold"])
def test_bind_parameters_are_refused(files, capsys, placeholder):
    q = f"SELECT WITH ANONYMIZATION {OPTS} dept, ANON_COUNT(*, 1) AS c FROM Users WHERE salary > {placeholder} GROUP BY dept"  # noqa: E501
    code, out = dpx(files, capsys, q)
    assert code == 2 and out.err.startswith("dpx: error: DPX-")


def test_three_thousand_nested_parentheses_are_refused(files, capsys):
    deep = "(" * 3000 + "1" + ")" * 3000
    q = f"SELECT WITH ANONYMIZATION {OPTS} dept, ANON_COUNT(*, 1) AS c FROM Users WHERE salary > {deep} GROUP BY dept"  # noqa: E501
    refused(files, capsys, q, "DPX-S005")


@pytest.mark.parametrize(
    "deep", ["+".join(["salary"] * 3000), "NOT " * 3000 + "TRUE", "- " * 3000 + "1"]
)
def test_long_operator_chains_never_crash(files, capsys, deep):
    """No parentheses, still deep: refused by the tree limit or by the recursion guard."""
    q = f"SELECT WITH ANONYMIZATION {OPTS} dept, ANON_COUNT(*, 1) AS c FROM Users WHERE salary > {deep} GROUP BY dept"  # noqa: E501
    code, out = dpx(files, capsys, q)
    assert code == 2 and out.err.startswith("dpx: error: DPX-")


def test_output_alias_row_is_a_correct_result(files, capsys):
    """`_row` was the engine's internal column; internal names now use a reserved prefix."""
    q = f"SELECT WITH ANONYMIZATION {EXACT} dept, ANON_COUNT(*, 1) AS _row FROM Users GROUP BY dept"  # noqa: E501
    code, out = dpx(files, capsys, q, "--json", "--seed", "1")
    assert code == 0
    result = json.loads(out.out)
    assert result["columns"] == ["dept", "_row"]
    assert sorted(result["rows"]) == [["HR", 30.0], ["IT", 30.0]]  # 30 units each, eps = 1e9


def test_reserved_prefix_alias_is_refused(files, capsys):
    q = f"SELECT WITH ANONYMIZATION {OPTS} dept, ANON_COUNT(*, 1) AS __dpx_row FROM Users GROUP BY dept"  # noqa: E501
    refused(files, capsys, q, "DPX-V034")


@pytest.mark.parametrize(
    ("key", "expected"),
    [("day", {"2024-01-01", "2024-01-02"}),
     ("at", {"2024-01-01T10:00:00", "2024-01-02T11:30:00"})],
)  # fmt: skip
def test_date_and_timestamp_keys_serialise_to_json(files, capsys, key, expected):
    q = f"SELECT WITH ANONYMIZATION {EXACT} {key}, ANON_COUNT(*, 1) AS c FROM Users GROUP BY {key}"  # noqa: E501
    code, out = dpx(files, capsys, q, "--json", "--seed", "1")
    assert code == 0
    rows = json.loads(out.out)["rows"]
    assert {r[0] for r in rows} == expected and all(r[1] == 30 for r in rows)


def test_date_keys_in_text_output(files, capsys):
    q = f"SELECT WITH ANONYMIZATION {EXACT} day, ANON_COUNT(*, 1) AS c FROM Users GROUP BY day"
    code, out = dpx(files, capsys, q, "--seed", "1")
    assert code == 0 and "2024-01-01" in out.out


@pytest.mark.parametrize(
    ("option", "rule"),
    [("max_rows_per_group = 1000000000000000000000", "max_rows_per_group"),
     ("max_rows_per_group = 1e21", "max_rows_per_group"),
     ("quantile_grid_size = 100000000000", "quantile_grid_size")],
)  # fmt: skip
def test_huge_quantile_parameters_are_refused(files, capsys, option, rule):
    q = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
        f"max_groups_contributed = 1, {option}) dept, ANON_MEDIAN(salary, 0, 100) AS m "
        "FROM Users GROUP BY dept"
    )
    assert rule in refused(files, capsys, q, "DPX-V033")


def test_unexpected_error_after_reading_data_is_generic_and_charged(files, capsys, monkeypatch):
    secret = "salary-150-of-user-7"

    def broken(*args, **kwargs):
        raise RuntimeError(secret)

    monkeypatch.setattr(service, "release", broken)
    q = f"SELECT WITH ANONYMIZATION {OPTS} dept, ANON_COUNT(*, 1) AS c FROM Users GROUP BY dept"
    line = refused(files, capsys, q, "DPX-E009")
    assert secret not in line and "RuntimeError" not in line
    assert "stands" in line and "epsilon 1" in line


def test_unexpected_error_before_reading_data_charges_nothing(files, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("internal")

    monkeypatch.setattr("core.cli.sql_run.prepare", broken)
    q = f"SELECT WITH ANONYMIZATION {OPTS} dept, ANON_COUNT(*, 1) AS c FROM Users GROUP BY dept"
    code, out = dpx(files, capsys, q)
    assert code == 2
    assert "DPX-E009" in out.err and "Nothing was charged" in out.err


def test_jsonable_covers_database_types():
    from core.dpsql.jsonsafe import jsonable

    value = {
        "d": dt.date(2024, 2, 29),
        "t": dt.datetime(2024, 2, 29, 1, 2, 3),
        "time": dt.time(1, 2),
        "span": dt.timedelta(days=1),
        "dec": Decimal("12.50"),
        "big": Decimal("123456789012345678901234567890"),
        "exact": Decimal("0.1000000000000000000000000001"),
        "b": b"\x00\xff",
        "nan": float("nan"),
        "np": np.int64(3),
        "ts": pd.Timestamp("2024-01-01"),
        "na": pd.NA,
        "list": [np.float64(np.inf), (1, 2)],
    }
    out = jsonable(value)
    json.dumps(out, allow_nan=False)  # must not raise
    assert out["d"] == "2024-02-29" and out["t"] == "2024-02-29T01:02:03"
    assert out["dec"] == 12.5 and out["big"] == 123456789012345678901234567890
    assert out["exact"] == "0.1000000000000000000000000001"
    assert out["b"] == "00ff" and out["nan"] is None and out["na"] is None
    assert out["list"] == [None, [1, 2]] and out["np"] == 3


def test_every_key_type_serialises_to_json(tmp_path, capsys):
    """DECIMAL, TIME, BLOB, LIST, INTERVAL and NaN keys all come out as plain JSON: a type
    with no declared counterpart is proposed as text (core.data.relation.propose) and read as
    its text form; DECIMAL as a float; NaN as missing."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 40
    table = pa.table(
        {
            "uid": list(range(n)),
            "dec": pa.array([Decimal("1.50"), Decimal("2.25")] * (n // 2), pa.decimal128(10, 2)),
            "tm": pa.array([dt.time(10, 0), dt.time(11, 30)] * (n // 2)),
            "bin": pa.array([b"\x00a", b"\xffb"] * (n // 2)),
            "lst": pa.array([[1, 2], [3]] * (n // 2)),
            "dur": pa.array([dt.timedelta(days=1), dt.timedelta(hours=2)] * (n // 2)),
            "f": pa.array([float("nan"), 1.5] * (n // 2)),
        }
    )
    pq.write_table(table, tmp_path / "types.parquet")
    expected = {
        "dec": [1.5, 2.25],
        "tm": ["10:00:00", "11:30:00"],
        "bin": ["\\x00a", "\\xFFb"],
        "lst": ["[1, 2]", "[3]"],
        "dur": ["7200000000", "86400000000"],  # Parquet stores microseconds
        "f": [1.5, None],
    }
    for key, keys in expected.items():
        q = f"SELECT WITH ANONYMIZATION {EXACT} {key}, ANON_COUNT(*, 1) AS c FROM U GROUP BY {key}"
        argv = ["sql", "--table", f"U={tmp_path / 'types.parquet'}", "--uid", "uid", "--query", q,
                "--json", "--seed", "1"]  # fmt: skip
        assert main(argv) == 0, key
        rows = json.loads(capsys.readouterr().out)["rows"]
        got = sorted(json.dumps(r[0]) for r in rows)
        assert got == sorted(json.dumps(k) for k in keys), key
        assert all(r[1] == n // 2 for r in rows)


def test_failure_while_formatting_a_charged_release_says_it_was_charged(files, capsys, monkeypatch):
    def broken(self):
        raise ValueError("cannot format 150")

    monkeypatch.setattr(service.QueryResult, "to_dict", broken)
    q = f"SELECT WITH ANONYMIZATION {OPTS} dept, ANON_COUNT(*, 1) AS c FROM Users GROUP BY dept"
    line = refused(files, capsys, q, "DPX-E009")
    assert "stands" in line and "150" not in line
