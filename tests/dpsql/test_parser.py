"""Parser: both forms, round trips, equal IR, errors with line/column, stock dialect intact."""

from __future__ import annotations

import pytest
import sqlglot

from core.dpsql.parse.dialect import DPSQL, Clamped, DPClause, parse_statements
from core.dpsql.parse.normalize import normalize
from core.errors import InputError

PAPER = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 2) "
    "dept, ANON_COUNT(*, 5) AS c, ANON_SUM(O.amount, 0, 100) AS s, "
    "ANON_AVG(O.amount CLAMPED BETWEEN 0 AND 100) AS a, ANON_NTILE(amount, 0.5, 0, 100) AS med, "
    "ANON_VAR(amount, 0, 100) AS v, COUNT(DISTINCT uid) AS n "
    "FROM Employee E JOIN Orders O USING (uid) GROUP BY dept"
)
ZETA = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1.0, delta = 1e-5, "
    "max_groups_contributed = 2, privacy_unit_column = uid) "
    "dept, COUNT(*, contribution_bounds_per_group => (0, 5)) AS c, "
    "SUM(O.amount, contribution_bounds_per_group => (0, 100)) AS s, "
    "AVG(O.amount, contribution_bounds_per_group => (0, 100)) AS a, "
    "PERCENTILE_CONT(amount, 0.5, contribution_bounds_per_row => (0, 100)) AS med, "
    "VAR_POP(amount, contribution_bounds_per_row => (0, 100)) AS v, COUNT(DISTINCT uid) AS n "
    "FROM Employee E JOIN Orders O USING (uid) GROUP BY dept"
)


@pytest.mark.parametrize("sql", [PAPER, ZETA])
def test_round_trip(sql):
    tree = parse_statements(sql)[0]
    assert isinstance(tree.args["hint"], DPClause)
    again = tree.sql(dialect=DPSQL)
    assert parse_statements(again)[0] == tree
    assert parse_statements(again)[0].sql(dialect=DPSQL) == again


def test_both_forms_give_the_same_ir():
    a = normalize(parse_statements(PAPER)[0], {"uid"}, {})
    b = normalize(parse_statements(ZETA)[0], {"uid"}, {})
    assert a.form != b.form
    assert a.options.epsilon == b.options.epsilon and a.options.delta == b.options.delta
    assert a.options.max_groups_contributed == b.options.max_groups_contributed
    assert [x.signature for x in a.aggregates] == [x.signature for x in b.aggregates]
    assert [o.name for o in a.outputs] == [o.name for o in b.outputs]
    assert [k.sql() for k in a.keys] == [k.sql() for k in b.keys]


def test_clamped_on_a_later_argument_moves_to_the_bounds():
    sql = "SELECT WITH ANONYMIZATION OPTIONS (epsilon=1, delta=1e-5, kappa=1) ANON_PERCENTILE_CONT(x, 0.25 CLAMPED BETWEEN 0 AND 10) AS q FROM t"
    tree = parse_statements(sql)[0]
    assert tree.find(Clamped) is not None
    agg = normalize(tree, {"uid"}, {}).aggregates[0]
    assert (agg.kind, agg.p, agg.lower, agg.upper) == ("QUANTILE", 0.25, 0.0, 10.0)


def test_identical_calls_are_computed_once():
    sql = "SELECT WITH ANONYMIZATION OPTIONS (epsilon=1, delta=1e-5, kappa=1) ANON_SUM(x, 0, 1) AS a, ANON_SUM(x, 0, 1) * 2 AS b FROM t"
    q = normalize(parse_statements(sql)[0], {"uid"}, {})
    assert len(q.aggregates) == 1


def test_parse_error_reports_line_column_and_token():
    sql = "SELECT WITH ANONYMIZATION\n  dept, ANON_SUM(x CLAMPED BETWEEN 0) FROM t"
    with pytest.raises(InputError) as err:
        parse_statements(sql)
    msg = str(err.value)
    assert "DPX-P001" in msg and "line 2" in msg and "column" in msg
    assert "near ')'" in msg
    assert "CLAMPED BETWEEN goes inside" in msg


def test_plain_syntax_error_position():
    with pytest.raises(InputError) as err:
        parse_statements("SELECT WITH ANONYMIZATION a FROM t WHERE (x > 1")
    assert "line 1" in str(err.value)


def test_stock_duckdb_dialect_is_unchanged():
    parse_statements(ZETA)
    with pytest.raises(sqlglot.errors.ParseError):
        sqlglot.parse_one(
            "SELECT SUM(x, contribution_bounds_per_group => (0, 1)) FROM t", read="duckdb"
        )
    with pytest.raises(sqlglot.errors.ParseError):
        sqlglot.parse_one("SELECT WITH ANONYMIZATION x FROM t", read="duckdb")
