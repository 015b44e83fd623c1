"""The time limit is decided before the charge from the tables' file sizes (public facts):
the default grows with the size, a --timeout too short to read the tables is refused uncharged,
and the output says what was decided. No wall clock: the decision function is tested."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.cli import main
from core.dpsql.limits import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from core.dpsql.time_limit import MB, THROUGHPUT, EngineKind, decide, table_bytes
from core.errors import InputError

Q = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) "
    "d, ANON_COUNT(*, 5) AS c FROM t GROUP BY d"
)
ISSUE_FILE = 474 * MB  # the 50M-row Parquet file of issue 22
ISSUE_SPARK_S = 193  # the time local Spark took on it (issue 22)


@pytest.mark.parametrize("engine", list(EngineKind))
def test_small_tables_keep_the_default(engine):
    limit = decide(None, 10_000, engine)
    assert limit.seconds == DEFAULT_TIMEOUT_S and not limit.scaled and not limit.given
    assert "default" in limit.line()


@pytest.mark.parametrize("engine", list(EngineKind))
def test_the_default_grows_with_the_size(engine):
    sizes = [MB, 100 * MB, ISSUE_FILE, 5000 * MB, 10**12]
    limits = [decide(None, size, engine).seconds for size in sizes]
    assert limits == sorted(limits) and limits[0] == DEFAULT_TIMEOUT_S
    assert limits[-1] == MAX_TIMEOUT_S  # capped at the ceiling a limit may have
    big = decide(None, ISSUE_FILE, engine)
    assert big.seconds >= THROUGHPUT[engine].slowest(ISSUE_FILE)  # never below the estimate
    if big.scaled:
        assert "scaled for 474 MB" in big.line()


def test_spark_on_the_issue_file_gets_more_than_it_needed():
    """The 474 MB file ran 193 s on local Spark and was stopped by the fixed 60 s default."""
    assert decide(None, ISSUE_FILE, EngineKind.SPARK).seconds > 2 * ISSUE_SPARK_S


@pytest.mark.parametrize("engine", list(EngineKind))
def test_a_timeout_too_short_for_the_size_is_refused(engine):
    floor = THROUGHPUT[engine].fastest(ISSUE_FILE)
    with pytest.raises(InputError, match=r"DPX-S009 .*Nothing was charged") as err:
        decide(floor / 2, ISSUE_FILE, engine)
    assert "--timeout" in str(err.value)
    kept = decide(floor * 2, ISSUE_FILE, engine)
    assert kept.seconds == floor * 2 and kept.given and "--timeout" in kept.line()
    assert decide(0.3, 10_000, engine).seconds == 0.3  # a short limit on a small table: fine


def test_table_bytes_sums_the_files(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"x" * 10)
    b.write_bytes(b"y" * 5)
    assert table_bytes([a, b, tmp_path / "missing"]) == 15


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"uid": range(60), "d": ["a", "b", "c"] * 20}).to_csv(path, index=False)
    return path


def _run(capsys, table, tmp_path, *extra):
    code = main(["sql", "--table", f"t={table}", "--uid", "uid", "--query", Q, "--seed", "1",
                 "--registry", str(tmp_path / "reg"), *extra])  # fmt: skip
    return code, capsys.readouterr()


def test_cli_refuses_a_short_timeout_before_charging(table, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("core.cli.sql_run.table_bytes", lambda paths: ISSUE_FILE)

    def no_charge(*args, **kwargs):
        raise AssertionError("charged")

    monkeypatch.setattr("core.cli.sql_run.govern", no_charge)
    code, out = _run(capsys, table, tmp_path, "--timeout", "0.01")
    assert code == 2 and "DPX-S009" in out.err and out.err.count("\n") == 1


def test_cli_says_what_it_decided(table, tmp_path, capsys, monkeypatch):
    code, out = _run(capsys, table, tmp_path)
    assert code == 0 and "time limit: 60 s (default" in out.out
    monkeypatch.setattr("core.cli.sql_run.table_bytes", lambda paths: ISSUE_FILE)
    seen = {}
    real = __import__("core.cli.sql_run", fromlist=["Engine"]).Engine

    def engine(catalog, timeout_s, **limits):
        seen["timeout"] = timeout_s
        return real(catalog, timeout_s=timeout_s, **limits)

    monkeypatch.setattr("core.cli.sql_run.Engine", engine)
    code, out = _run(capsys, table, tmp_path, "--json")
    decided = json.loads(out.out)["time_limit"]
    expected = decide(None, ISSUE_FILE, EngineKind.DUCKDB)
    assert code == 0 and decided == expected.to_json() and seen["timeout"] == expected.seconds
