"""Sandbox: forbidden statements and functions are refused before execution; the engine is
locked (no file access, no configuration changes) before any generated SQL runs."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from core.dpsql.execute.engine import Engine, sandbox
from core.dpsql.service import prepare
from core.errors import InputError
from core.privacy import Noise

OPT = "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1)"
GOOD = f"SELECT WITH ANONYMIZATION {OPT} ANON_COUNT(*, 5) AS c FROM Employee"

CASES = [
    (f"{GOOD}; DROP TABLE Employee", "DPX-S001"),
    (f"{GOOD}; {GOOD}", "DPX-S001"),
    ("DROP TABLE Employee", "DPX-S002 DROP"),
    ("CREATE TABLE x AS SELECT * FROM Employee", "DPX-S002 CREATE"),
    ("INSERT INTO Employee VALUES (9, 'x', 1)", "DPX-S002 INSERT"),
    ("DELETE FROM Employee", "DPX-S002 DELETE"),
    ("UPDATE Employee SET age = 1", "DPX-S002 UPDATE"),
    ("ATTACH 'other.db' AS o", "DPX-S002 ATTACH"),
    ("COPY Employee TO 'out.csv'", "DPX-S002 COPY"),
    ("PRAGMA database_list", "DPX-S002 PRAGMA"),
    ("SET enable_external_access = true", "DPX-S002 SET"),
    ("INSTALL httpfs", "DPX-S002"),
    ("SELECT * FROM Employee", "DPX-S001 this is a plain SELECT"),
    (f"SELECT WITH ANONYMIZATION {OPT} ANON_COUNT(*, 5) FROM read_csv('/etc/passwd')", "DPX-S003"),
    (f"SELECT WITH ANONYMIZATION {OPT} ANON_COUNT(*, 5) FROM '/etc/passwd'", "DPX-S003"),
    (f"SELECT WITH ANONYMIZATION {OPT} ANON_COUNT(*, 5) FROM information_schema.tables", "DPX-S003"),
    (f"SELECT WITH ANONYMIZATION {OPT} ANON_COUNT(*, 5) FROM secret_table", "DPX-S003 unknown table"),
    (f"SELECT WITH ANONYMIZATION {OPT} ANON_SUM(random(), 0, 1) FROM Employee", "DPX-A001 `RAND`"),
    (f"SELECT WITH ANONYMIZATION {OPT} ANON_COUNT(*, 5) FROM Employee WHERE read_text('/etc/passwd') = ''", "DPX-A001"),
    (f"SELECT WITH ANONYMIZATION {OPT} uid, ANON_COUNT(*, 5) FROM Employee GROUP BY uid", "DPX-V028"),
    (f"SELECT WITH ANONYMIZATION {OPT} uid FROM Employee", "DPX-V028"),
]  # fmt: skip


@pytest.mark.parametrize(("sql", "code"), CASES)
def test_refused_before_execution(sql, code, catalog_of):
    emp = pd.DataFrame({"uid": [1, 2], "dept": ["a", "b"], "age": [1, 2]})
    with pytest.raises(InputError) as err:
        prepare(sql, catalog_of({"Employee": emp}), Noise.seeded(0))
    assert code in str(err.value), str(err.value)


def test_engine_is_locked_before_use(tmp_path):
    secret = tmp_path / "x.csv"
    secret.write_text("a\n1\n")
    con = sandbox({"t": pd.DataFrame({"a": [1]})})
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (1,)
    with pytest.raises(duckdb.Error):
        con.execute("SET enable_external_access = true")
    with pytest.raises(duckdb.Error):
        con.execute(f"SELECT * FROM '{secret}'")
    with pytest.raises(duckdb.Error):
        con.execute(f"SELECT * FROM read_csv('{secret}')")
    with pytest.raises(duckdb.Error):
        con.execute(f"ATTACH '{tmp_path / 'o.db'}' AS o")


def test_engine_runs_only_selects(catalog_of):
    eng = Engine(catalog_of({"t": pd.DataFrame({"uid": [1]})}))
    with pytest.raises(InputError):
        eng.fetch("DROP TABLE t")


def test_cursors_inherit_the_lock(tmp_path):
    con = sandbox({"t": pd.DataFrame({"a": [1]})})
    cur = con.cursor()
    with pytest.raises(duckdb.Error):
        cur.execute("SET lock_configuration = false")
    with pytest.raises(duckdb.Error):
        cur.execute(f"SELECT * FROM read_csv('{tmp_path / 'x.csv'}')")


def test_watchdog_stops_a_long_query(catalog_of):
    eng = Engine(catalog_of({"t": pd.DataFrame({"uid": [1]})}), timeout_s=0.2)
    with pytest.raises(InputError, match="DPX-E003"):
        eng.fetch("SELECT COUNT(*) FROM range(100000000000) a")
    assert eng.fetch("SELECT 1 AS one")[1] == [(1,)]  # the engine stays usable
