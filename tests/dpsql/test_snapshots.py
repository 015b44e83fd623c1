"""Snapshot tests of the rewritten SQL (golden files in tests/dpsql/snapshots/).

Regenerate after an intended change with DPX_UPDATE_SNAPSHOTS=1 and review the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.dpsql.sql.expressions import DIALECTS
from core.privacy import Noise

SNAPSHOTS = Path(__file__).parent / "snapshots"
OPT = "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2)"
QUERIES = {
    "count_join": f"SELECT WITH ANONYMIZATION {OPT} dept, ANON_COUNT(*, 5) AS c "
    "FROM Employee E JOIN Orders O USING (uid) GROUP BY dept",
    "sum_avg": f"SELECT WITH ANONYMIZATION {OPT} dept, ANON_SUM(O.amount, 0, 100) AS s, "
    "ANON_AVG(O.amount CLAMPED BETWEEN 0 AND 100) AS a FROM Employee E JOIN Orders O "
    "ON E.uid = O.uid WHERE O.amount > 1 GROUP BY dept",
    "zeta_rows": "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, "
    "max_groups_contributed = 1, privacy_unit_column = uid) "
    "VAR_POP(amount, contribution_bounds_per_row => (0, 10)) AS v, "
    "PERCENTILE_CONT(amount, 0.5, contribution_bounds_per_row => (0, 10)) AS m FROM Orders",
    "public_join": f"SELECT WITH ANONYMIZATION {OPT} floor, COUNT(DISTINCT uid) AS n "
    "FROM Employee E LEFT JOIN Depts D ON E.dept = D.dept GROUP BY floor",
}


def catalog() -> Catalog:
    cat = Catalog()
    cat.add_private("Employee", pd.DataFrame({"uid": [1, 2], "dept": ["a", "b"]}), "uid")
    cat.add_private("Orders", pd.DataFrame({"uid": [1, 2], "amount": [1.0, 2.0]}), "uid")
    cat.add_public("Depts", pd.DataFrame({"dept": ["a"], "floor": [1]}))
    return cat


CASES = [(q, d) for q in QUERIES for d in (*DIALECTS, "duckdb_executable")]


@pytest.mark.parametrize(("name", "dialect"), CASES)
def test_rewritten_sql_snapshot(name, dialect):
    cat = catalog()
    prepared = prepare(QUERIES[name], cat, Noise.seeded(0))
    if dialect == "duckdb_executable":
        sql = prepared.staged.sql("duckdb", executable=True)
        Engine(cat).fetch(sql)  # the executed form runs on DuckDB
    else:
        sql = prepared.staged.sql(dialect)
    path = SNAPSHOTS / f"{name}.{dialect}.sql"
    if os.environ.get("DPX_UPDATE_SNAPSHOTS") or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(sql + "\n")
    assert sql + "\n" == path.read_text()


def test_exports_use_random_and_execution_uses_the_salted_hash():
    prepared = prepare(QUERIES["count_join"], catalog(), Noise.seeded(0))
    assert "RANDOM()" in prepared.staged.sql("duckdb")
    assert "RAND()" in prepared.staged.sql("spark")
    executed = prepared.staged.sql("duckdb", executable=True)
    assert "RANDOM()" not in executed  # the salted partition key (issue 30): MD5 per partition
    assert "MD5(" in executed  # (MD5_NUMBER: the row caps of the two joined private tables)
    # one CTE per stage, the sampling stage keeps at most C_u partitions per unit
    stages = ("src", "per_user", "part_keys", "unit_keyed", "keyed", "sampled", "clamped")
    for stage in (*stages, "cross_user"):
        assert f"{stage} AS (" in executed
    assert "ROW_NUMBER() OVER (PARTITION BY _uid ORDER BY _r) <= 2" in executed
    # the salt comes from the Noise object: another seed, another key
    other = prepare(QUERIES["count_join"], catalog(), Noise.seeded(1)).plan
    assert other.salt != prepared.plan.salt


def test_clamping_is_null_safe_in_every_dialect():
    prepared = prepare(QUERIES["sum_avg"], catalog(), Noise.seeded(0))
    for dialect in DIALECTS:
        sql = prepared.staged.sql(dialect, pretty=False)
        assert "CASE WHEN p0 IS NULL THEN NULL ELSE" in sql
