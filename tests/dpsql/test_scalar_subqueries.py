"""Scalar subqueries and raising constants (issue 9 follow-up, engineer 9b).

Each test fails on the code before the fix (commit 49808af):
- a public scalar subquery with several rows failed with DPX-E004 *after* the charge, or was
  released, depending on whether DuckDB's plan evaluated it (a pruned column is never run);
  now it is refused before data is read (DPX-A006) whatever the plan;
- a constant that raises (`1 // 0`, a date beyond DuckDB's range) was not put inside TRY, so in
  a CASE branch taken only for the victim's rows the query failed on D and ran on D';
- EXISTS over a public table was refused as "a subquery inside EXISTS" (DPX-A003).
The whole class is in `tests/dpsql/corpus/scalar_subqueries.sql` (differencing oracle).
"""

from __future__ import annotations

import pytest
import sqlglot

from core.dpsql.check.scalar_subqueries import at_most_one_row, check_scalar_subqueries
from core.dpsql.parse.dialect import DPSQL
from core.errors import InputError
from tests.dpsql.oracle.corpus import DP
from tests.dpsql.oracle.harness import Victim, difference


def _outcomes(sql: str) -> set[str]:
    labels = set()
    for victim in Victim:
        verdict = difference(sql, victim)
        assert not verdict.violations, verdict.summary()
        labels.add(verdict.with_victim.label)
    return labels


def _in_victim_branch(condition: str) -> str:
    return (
        f"{DP} dept, ANON_COUNT(*, 5) AS c FROM Users WHERE CASE WHEN uid = 7 THEN {condition} "
        "ELSE false END GROUP BY dept"
    )


@pytest.mark.parametrize(
    "sql",
    [
        _in_victim_branch("uid = (SELECT g FROM Pub)"),
        _in_victim_branch("age = (SELECT MAX(g) FROM Pub GROUP BY label)"),
        _in_victim_branch("age = (SELECT g FROM Pub LIMIT 2)"),
        _in_victim_branch("age IN (1, (SELECT g FROM Pub))"),
        # a column DuckDB prunes: the old code released it, used it failed (E004)
        f"{DP} U.dept, ANON_COUNT(*, 5) AS c FROM Users U JOIN (SELECT g, (SELECT g FROM Pub) "
        "AS z FROM Pub) p ON U.age = p.g GROUP BY U.dept",
    ],
)
def test_a_scalar_subquery_that_may_return_several_rows_is_refused_before_reading(sql):
    assert _outcomes(sql) == {"refused DPX-A006"}


@pytest.mark.parametrize(
    "condition",
    [
        "age = (SELECT g FROM Pub ORDER BY g LIMIT 1)",
        "age = (SELECT MAX(g) FROM Pub)",
        "age = ((SELECT MIN(g) FROM Pub WHERE g > 3))",
        "age IN (SELECT g FROM Pub)",
        "EXISTS (SELECT g FROM Pub)",
    ],
)
def test_subqueries_that_cannot_fail_on_their_row_count_are_released(condition):
    assert _outcomes(_in_victim_branch(condition)) == {"released"}


@pytest.mark.parametrize(
    "condition",
    [
        "1 // 0 = 1",
        "1 % 0 = 1",
        "DATE '2020-01-01' + INTERVAL 100000000 YEAR IS NULL",
        "age = (SELECT 1 // 0 FROM Pub LIMIT 1)",
    ],
)
def test_a_raising_constant_in_the_victims_branch_runs_inside_try(condition):
    """Before the fix: refused DPX-E004 on D (the branch ran for the victim), released on D'."""
    assert _outcomes(_in_victim_branch(condition)) == {"released"}


def test_expression_subqueries_over_ctes_are_private_only_when_the_cte_reads_private_data():
    public = (
        f"WITH p AS (SELECT g FROM Pub WHERE g > 10) {DP} dept, ANON_COUNT(*, 5) AS c "
        "FROM Users WHERE age > (SELECT MIN(g) FROM p) GROUP BY dept"
    )
    private = (
        f"WITH q AS (SELECT uid AS g FROM Users), p AS (SELECT g FROM q) {DP} dept, "
        "ANON_COUNT(*, 5) AS c FROM Users WHERE age IN (SELECT g FROM p) GROUP BY dept"
    )
    assert _outcomes(public) == {"released"}  # was refused: every CTE counted as private
    assert _outcomes(private) == {"refused DPX-V016"}


# -- the shape rule itself ---------------------------------------------------------------------
def _query(text: str):
    return sqlglot.parse_one(text, dialect=DPSQL)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT g FROM Pub LIMIT 1",
        "SELECT g FROM Pub LIMIT 0",
        "SELECT g FROM Pub FETCH FIRST 1 ROWS ONLY",
        "SELECT MAX(g) FROM Pub",
        "SELECT COUNT(*) + 1 AS n FROM Pub WHERE g > 3",
        "SELECT COUNT(*) FROM Pub HAVING COUNT(*) > 2",
        "SELECT MAX(g) FROM Pub LIMIT 5",
    ],
)
def test_shapes_with_at_most_one_row(text):
    assert at_most_one_row(_query(text))


@pytest.mark.parametrize(
    "text",
    [
        "SELECT g FROM Pub",
        "SELECT g FROM Pub LIMIT 2",
        "SELECT g FROM Pub LIMIT 1 + 0",
        "SELECT g FROM Pub LIMIT 1%",
        "SELECT MAX(g) FROM Pub GROUP BY label",
        "SELECT MAX(g) OVER () FROM Pub",  # a window keeps every row
        "SELECT g, (SELECT MAX(g) FROM Pub) FROM Pub",  # the aggregate belongs to the inner query
        "SELECT DISTINCT label FROM Pub WHERE g = 1",
        "SELECT g FROM Pub UNION SELECT g FROM Pub",
    ],
)
def test_shapes_that_may_return_several_rows(text):
    assert not at_most_one_row(_query(text))


def test_relations_and_row_tests_are_not_scalar_subqueries():
    tree = _query(
        "WITH c AS (SELECT g FROM Pub) SELECT a FROM (SELECT g AS a FROM Pub) s "
        "JOIN (SELECT g FROM Pub) t ON s.a = t.g WHERE a IN (SELECT g FROM c) "
        "AND EXISTS (SELECT g FROM Pub)"
    )
    check_scalar_subqueries(tree)  # no scalar subquery: nothing to refuse


def test_the_refusal_names_the_rule_and_the_fix():
    with pytest.raises(InputError) as err:
        check_scalar_subqueries(_query("SELECT a FROM t WHERE a = (SELECT g FROM Pub)"))
    text = str(err.value)
    assert text.startswith("DPX-A006 the scalar subquery `(SELECT g FROM Pub)`")
    assert "Fix: add LIMIT 1" in text
