"""The executed per_user keeps the groups that have a unit with `HAVING COUNT(_uid) > 0`, not
`WHERE _uid IS NOT NULL` (issue 27): DuckDB pushes a WHERE on `_uid` through a declared CSV
table's view to the scan and converts the unit column twice per row. Old and new forms must
give the very same stages on adversarial files (units that are bad numbers, NaN, empty,
multi-byte text longer than the declared width, quoted, on short and long lines), and the new
plan must convert the unit column once."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from sqlglot import exp

from core.data.declared import ColumnFact, ColumnType, TableSchema
from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.dpsql.sql.stages import assemble
from core.privacy import Noise

HAVING = "HAVING COUNT(_uid) > 0"
WHERE = "WHERE NOT _uid IS NULL"
OLD_FORM = re.compile(r"GROUP BY ([^()]*?) HAVING COUNT\(_uid\) > 0")


def old_form(text: str) -> str:
    """The executed SQL as it was: per_user filtered by WHERE before its GROUP BY."""
    out, n = OLD_FORM.subn(r"WHERE NOT _uid IS NULL GROUP BY \1", text)
    assert n == 1
    return out


QUERIES = [
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 5, delta = 1e-5, max_groups_contributed = 2) "
    "g, ANON_COUNT(*, 3) AS n, ANON_SUM(x, 0, 10) AS s, ANON_AVG(x, 0, 10) AS a FROM t GROUP BY g",
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 5, delta = 1e-5, max_groups_contributed = 1) "
    "ANON_COUNT(x, 2) AS n FROM t WHERE x > 1",
]
# the unit column on each line: numbers, not numbers, NaN, empty, quoted, multi-byte text longer
# than the declared width; some lines too short or too long
LINES = [
    "1,a,1.5",
    "1,a,2",
    "1,b,3",
    "2,b,nan",
    " 3 ,a,4",
    '"4",b,5',
    ",a,6",
    '"",b,7',
    "x,a,8",
    "1.5,b,9",
    "1e3,a,1",
    "NaN,a,2",
    "inf,b,3",
    "99999999999999999999999,a,4",
    "-7,,5",
    "élan-ümlaut-ñ-長い名前,a,6",
    "élan-ümlaut-ñ-長い名前-2,a,7",
    '"q""uote",b,8',
    "5,a",
    "6,b,2,extra",
    "7",
    "8,c,12",
    "8,c,-4",
    "8,d,x",
]


def _catalog(tmp_path, kind: ColumnType) -> Catalog:
    path = tmp_path / f"t_{kind.name}.csv"
    path.write_bytes(("uid,g,x\n" + "\n".join(LINES) + "\n").encode())
    width = 8 if kind is ColumnType.TEXT else None
    schema = TableSchema(
        (
            ColumnFact("uid", kind, max_length=width),
            ColumnFact("g", ColumnType.TEXT, max_length=1),
            ColumnFact("x", ColumnType.FLOAT),
        ),
        max_rows=1000,
    )
    cat = Catalog()
    cat.add_declared("t", path, schema, uid="uid")
    return cat


def _stages(cat: Catalog, query: str, old: bool) -> dict[str, list]:
    prepared = prepare(query, cat, Noise.seeded(3))
    staged = prepared.staged
    engine = Engine(cat)
    try:
        out = {}
        order = [n for n, _ in staged.stages]
        for name in ("per_user", "sampled", "cross_user"):
            upto = staged.stages[: order.index(name) + 1]
            sql = assemble(staged.relation, upto, exp.select("*").from_(name), total=True)
            text = sql.sql("duckdb")
            if old:
                text = old_form(text)
            columns, rows = engine.fetch(text)
            frame = pd.DataFrame(rows, columns=columns, dtype=object)
            out[name] = sorted(map(repr, frame.itertuples(index=False)))
        return out
    finally:
        engine.close()


@pytest.mark.parametrize("kind", [ColumnType.INTEGER, ColumnType.TEXT])
@pytest.mark.parametrize("query", QUERIES)
def test_having_keeps_the_same_groups_as_where(tmp_path, kind, query):
    cat = _catalog(tmp_path, kind)
    new = _stages(cat, query, False)
    old = _stages(cat, query, True)
    assert new == old
    assert new["per_user"]  # the file has units: the comparison is not vacuous


def test_the_executed_plan_converts_the_unit_once(tmp_path):
    cat = _catalog(tmp_path, ColumnType.INTEGER)
    prepared = prepare(QUERIES[0], cat, Noise.seeded(3))
    text = prepared.staged.sql("duckdb", executable=True, pretty=False)
    assert HAVING in text and WHERE not in text
    engine = Engine(cat)
    try:
        plan = "\n".join(str(r[-1]) for r in engine.con.execute("EXPLAIN " + text).fetchall())
        old = "\n".join(
            str(r[-1]) for r in engine.con.execute("EXPLAIN " + old_form(text)).fetchall()
        )
    finally:
        engine.close()
    # the old form's WHERE reaches the scan as a filter on the converted text; the new one not
    assert "TRY_CAST(uid AS BIGINT) IS NULL" in old or "TRY_CAST(uid AS BIGINT) IS NOT NULL" in old
    assert "TRY_CAST(uid AS BIGINT) IS NULL" not in plan
    assert "TRY_CAST(uid AS BIGINT) IS NOT NULL" not in plan


def test_exports_and_row_level_queries_keep_the_where(tmp_path):
    cat = _catalog(tmp_path, ColumnType.INTEGER)
    prepared = prepare(QUERIES[0], cat, Noise.seeded(3))
    for dialect in ("duckdb", "spark", "postgres", "bigquery"):
        assert HAVING not in prepared.staged.sql(dialect)
    rows = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 5, delta = 1e-5, max_groups_contributed = 1,"
        " max_rows_per_group = 2) g, ANON_VAR(x, 0, 10) AS v FROM t GROUP BY g"
    )
    text = prepare(rows, cat, Noise.seeded(3)).staged.sql("duckdb", executable=True, pretty=False)
    assert HAVING not in text and WHERE in text


@pytest.mark.parametrize("kind", [ColumnType.INTEGER, ColumnType.TEXT])
def test_rows_whose_values_do_not_fit_are_counted(tmp_path, kind):
    """ANON_COUNT(*) counts a unit's row whose x is not a number (x is missing, the row stays):
    the engine's connection keeps DuckDB from moving the cast into the CSV reader, where the
    row would be dropped (core.data.relation.guard_connection)."""
    cat = _catalog(tmp_path, kind)
    per_user = _stages(cat, QUERIES[0], False)["per_user"]
    spec = cat.tables()[0]
    import duckdb

    from core.data.relation import source_sql, typed_select

    con = duckdb.connect()
    con.execute(f"CREATE TABLE raw AS SELECT * FROM {source_sql(spec.source, spec.declared)}")
    want = con.execute(
        f"SELECT count(*) FROM ({typed_select(spec.declared, 'raw')}) WHERE uid IS NOT NULL"
    ).fetchone()[0]
    counted = sum(int(re.search(r"p0=(\d+)", row)[1]) for row in per_user)
    assert counted == want
    assert any("p1=None" in row for row in per_user)  # a row with x missing is there
