"""Resource limits (issue 9): DuckDB threads/memory set and locked, a wall-clock timeout that
interrupts a genuinely slow query and keeps its charge, and size limits on the query text."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.dpsql.execute.engine import Engine, sandbox
from core.dpsql.limits import ResourceLimits
from core.dpsql.parse.text import MAX_PAREN_DEPTH, MAX_QUERY_CHARS, check_text, paren_depth
from core.dpsql.service import prepare
from core.errors import InputError
from core.governance import ComputeFailed
from core.privacy import Noise
from tests.dpsql.governed import Charged

# Each Users row meets all 10,000 rows of P: the most one private row may produce (DPX-V040),
# so a large Users table makes a slow query that is still accepted.
COUNT_BY_X = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) "
    "a.x, ANON_COUNT(*, 1) AS c FROM Users, P AS a GROUP BY a.x"
)


@pytest.fixture
def slow_catalog(catalog_of):
    """100,000 units and a 10,000-row public table: the cross join has 1e9 rows."""
    users = pd.DataFrame({"uid": range(100_000), "v": np.arange(100_000.0)})
    public = pd.DataFrame({"x": range(10_000)})
    return catalog_of({"Users": users}, {"P": public})


def test_threads_and_memory_are_set_and_locked():
    """Threads and a hard memory limit (no spilling to disk), locked like the rest."""
    con = sandbox({"t": pd.DataFrame({"a": [1]})}, ResourceLimits(threads=1, memory_limit="64MB"))
    threads, memory = con.execute(
        "SELECT current_setting('threads'), current_setting('memory_limit')"
    ).fetchone()
    assert threads == 1
    assert memory.endswith(("MiB", "MB")) and float(memory.split()[0]) <= 64
    assert con.execute("SELECT current_setting('temp_directory')").fetchone()[0] == ""
    for statement in ("SET threads = 2", "SET memory_limit = '10GB'"):
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute(statement)


def test_engine_applies_its_limits(slow_catalog):
    engine = Engine(slow_catalog, threads=1, memory_limit="256MB", timeout_s=5)
    assert engine.limits == ResourceLimits(threads=1, memory_limit="256MB", timeout_s=5)
    assert engine.con.execute("SELECT current_setting('threads')").fetchone()[0] == 1


@pytest.mark.parametrize(
    "kwargs",
    [{"timeout_s": 0}, {"timeout_s": -1}, {"timeout_s": float("nan")}, {"threads": 0},
     {"memory_limit": "lots"}, {"timeout_s": float("inf")}],
)  # fmt: skip
def test_bad_limits_are_refused(kwargs):
    with pytest.raises(InputError, match="DPX-S008"):
        ResourceLimits(**kwargs)


def test_timeout_interrupts_a_cross_join_and_keeps_the_charge(slow_catalog, tmp_path):
    noise = Noise.seeded(0)
    prepared = prepare(COUNT_BY_X, slow_catalog, noise)
    session = Charged(tmp_path)
    with pytest.raises(ComputeFailed) as err:
        session.run(prepared, Engine(slow_catalog, timeout_s=0.5))
    message = str(err.value)
    assert message.startswith("DPX-E003") and "time limit" in message
    assert "stands" in message and "epsilon 1" in message
    assert session.spent == pytest.approx((1.0, 1e-5))  # the data had been read: charged


def test_out_of_memory_is_charged_with_a_generic_message(catalog_of, tmp_path):
    users = pd.DataFrame({"uid": range(2000), "v": np.arange(2000.0)})
    catalog = catalog_of({"Users": users}, {"P": pd.DataFrame({"x": range(10_000)})})
    query = COUNT_BY_X
    noise = Noise.seeded(0)
    session = Charged(tmp_path)
    with pytest.raises(ComputeFailed) as err:
        session.run(
            prepare(query, catalog, noise),
            Engine(catalog, threads=1, memory_limit="24MB", timeout_s=120),
        )
    assert str(err.value).startswith("DPX-E005") and "stands" in str(err.value)
    assert session.spent[0] == pytest.approx(1.0)


def test_cli_timeout_exits_2_and_says_it_was_charged(tmp_path, capsys):
    users = pd.DataFrame({"uid": range(100_000), "v": np.arange(100_000.0)})
    users.to_csv(tmp_path / "u.csv", index=False)
    pd.DataFrame({"x": range(10_000)}).to_csv(tmp_path / "p.csv", index=False)
    code = main(
        ["sql", "--table", f"Users={tmp_path / 'u.csv'}", "--public", f"P={tmp_path / 'p.csv'}",
         "--uid", "uid", "--query", COUNT_BY_X, "--timeout", "0.5", "--seed", "1"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "DPX-E003" in err and "stands" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("value", ["0", "-3", "nan", "inf", "1e9"])
def test_cli_refuses_a_bad_timeout(tmp_path, capsys, value):
    pd.DataFrame({"uid": [1], "v": [1.0]}).to_csv(tmp_path / "u.csv", index=False)
    code = main(
        ["sql", "--table", f"Users={tmp_path / 'u.csv'}", "--uid", "uid",
         "--query", COUNT_BY_X, f"--timeout={value}"]
    )  # fmt: skip
    assert code == 2
    assert "DPX-S008" in capsys.readouterr().err


def test_paren_depth_ignores_literals_names_and_comments():
    assert paren_depth("SELECT ((1))") == 2
    assert paren_depth("SELECT '((((' , \"a(((\" -- ((((\n /* (((( */ (1)") == 1
    assert paren_depth("SELECT 'it''s ((' , (1)") == 1


def test_text_limits():
    check_text("SELECT " + "(" * MAX_PAREN_DEPTH + "1" + ")" * MAX_PAREN_DEPTH)
    with pytest.raises(InputError, match="DPX-S005"):
        check_text("SELECT " + "(" * (MAX_PAREN_DEPTH + 1) + "1" + ")" * (MAX_PAREN_DEPTH + 1))
    with pytest.raises(InputError, match="DPX-S005"):
        check_text("SELECT 1 " + " " * MAX_QUERY_CHARS)
    with pytest.raises(InputError, match="DPX-S001"):
        check_text("   ")


def _cte_chain(n: int) -> str:
    """CTEs that each read the previous one twice: 2^n table references once expanded (joined
    on their key, so each stays a 10,000-row public table)."""
    ctes = ["p0 AS (SELECT x FROM P)"] + [
        f"p{i} AS (SELECT a.x FROM p{i - 1} a JOIN p{i - 1} b ON a.x = b.x)" for i in range(1, n)
    ]
    return (
        "WITH " + ", ".join(ctes) + " SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, "
        "delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 1) AS c "
        f"FROM Users, p{n - 1}"
    )


def test_expanded_table_references_count_cte_reuse():
    from core.dpsql.check.size import expanded_table_references
    from core.dpsql.parse.dialect import parse_statements

    def count(sql):
        return expanded_table_references(parse_statements(sql)[0])

    assert count("SELECT 1 FROM a JOIN b ON a.x = b.x") == 2
    # p1 = 2 reads of p0, p2 = 2 reads of p1 -> 4 (+ the definitions themselves, counted too)
    assert count(_cte_chain(3)) >= 2**2
    assert count(_cte_chain(30)) > 2**10  # capped just above the limit, never computed in full
    # a CTE named like the table it filters reads that table, not itself
    assert count("WITH t AS (SELECT * FROM t WHERE x > 1) SELECT * FROM t") <= 3


def test_a_cte_chain_that_doubles_is_refused_before_analysis(slow_catalog):
    """Without the limit, 20 doubling CTEs took minutes to analyse (a hang); now refused."""
    from core.dpsql.check.size import MAX_EXPANDED_TABLE_REFERENCES

    with pytest.raises(InputError, match="DPX-S005") as err:
        prepare(_cte_chain(20), slow_catalog, Noise.seeded(0))
    assert f"{MAX_EXPANDED_TABLE_REFERENCES:,}" in str(err.value)
    prepare(_cte_chain(3), slow_catalog, Noise.seeded(0))  # a short chain is fine


def test_cli_analysis_past_the_time_limit_is_refused_uncharged(tmp_path, capsys, monkeypatch):
    """A slow analysis (pure Python, no data) ends at --timeout: exit 2, nothing charged."""
    import time

    def slow_prepare(*args, **kwargs):
        end = time.monotonic() + 60
        while time.monotonic() < end:  # busy Python work, as a pathological parse would do
            sum(range(1000))
        raise AssertionError("the deadline did not fire")

    monkeypatch.setattr("core.cli.sql_run.prepare", slow_prepare)
    pd.DataFrame({"uid": range(3), "v": [1.0] * 3}).to_csv(tmp_path / "u.csv", index=False)
    code = main(
        ["sql", "--table", f"Users={tmp_path / 'u.csv'}", "--uid", "uid", "--query", "SELECT 1",
         "--timeout", "0.3"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "DPX-S007" in err and "nothing was charged" in err
