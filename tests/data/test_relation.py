"""Reading a file into its declared schema (core.data.relation, issue 27): the read is total (no
byte sequence makes it raise), a value that does not fit its declared type, width, domain or
bounds becomes missing, and the proposal given to the owner never depends on missing values."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.data.declared import ColumnFact, ColumnType, TableSchema
from core.data.relation import (
    guard_connection,
    load_declared,
    propose,
    relation_sql,
    source_sql,
    typed_select,
    write_declared,
)

SCHEMA = TableSchema(
    (
        ColumnFact("uid", ColumnType.INTEGER, nullable=False),
        ColumnFact("n", ColumnType.INTEGER, bounds=(0, 100)),
        ColumnFact("x", ColumnType.FLOAT),
        ColumnFact("s", ColumnType.TEXT, max_length=3),
        ColumnFact("c", ColumnType.TEXT, categories=("a", "b")),
        ColumnFact("d", ColumnType.DATE),
        ColumnFact("f", ColumnType.BOOLEAN),
    ),
    max_rows=1000,
)


def _read(path, schema=SCHEMA) -> list[tuple]:
    con = duckdb.connect()
    guard_connection(con)
    return con.execute(relation_sql(path, schema) + " ORDER BY uid").fetchall()


def test_values_that_do_not_fit_become_missing(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "uid,n,x,s,c,d,f\n"
        "1,5,1.5,abc,a,2024-01-02,true\n"
        "2,500,inf,abcdef,z,2024-13-45,maybe\n"  # out of bounds, inf, too long, not a category
        "3,x,nan,,b,,\n"  # not an integer, NaN, empty
        ",7,2,ok,a,2024-01-01,false\n"  # the non-nullable unit is missing: the row is left out
    )
    assert _read(path) == [
        (1, 5, 1.5, "abc", "a", __import__("datetime").date(2024, 1, 2), True),
        (2, None, None, "abc", None, None, None),
        (3, None, None, None, "b", None, None),
    ]


def test_parquet_values_are_converted_by_the_same_rule(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table({"uid": [1, 2], "n": [5.0, 1e9], "x": ["1.5", "no"], "s": ["abcdef", None],
                  "c": ["a", "zz"], "d": ["2024-01-02", "x"], "f": [1, 0]}),  # fmt: skip
        path,
    )
    rows = _read(path)
    assert rows[0][:5] == (1, 5, 1.5, "abc", "a") and rows[1][:5] == (2, None, None, None, None)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.sampled_from([b"a", b"1", b",", b'"', b"\n", b"\r\n", b"\xff", b"\x00", b"\xe2\x82",
                         b" ", b"\\", b";", b"2024-01-01", b"1e400", b"-9223372036854775809"]),
        max_size=300,
    ),  # fmt: skip
    st.integers(1, 400),
)
def test_no_bytes_make_the_read_raise(tmp_path, parts, repeat):
    """Whatever a private file holds, reading it into its schema never raises: a failure after
    the charge could otherwise depend on one person's row."""
    path = tmp_path / "fuzz.csv"
    path.write_bytes(b"uid,n,x,s,c,d,f\n1,2,3,abc,a,2024-01-01,true\n" + b"".join(parts) * repeat)
    _read(path)  # must not raise


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_the_proposal_does_not_move_with_a_missing_value(tmp_path, kind):
    """Neighbouring files, one with a person whose `cnt` is missing: the same proposed schema
    (the footer's null counts or a NULL in a sample used to turn an integer into DOUBLE)."""
    proposals = []
    for with_missing in (False, True):
        cnt = [3, 5, None] if with_missing else [3, 5, 4]
        table = pa.table({"uid": pa.array([1, 2, 3], pa.int64()), "cnt": pa.array(cnt, pa.int64()),
                          "region": ["n", "s", "e"]})  # fmt: skip
        path = tmp_path / f"t{with_missing}.{kind}"
        if kind == "parquet":
            pq.write_table(table, path)
        else:
            table.to_pandas().astype({"cnt": "Int64"}).to_csv(path, index=False)
        proposals.append(propose(path))
    assert proposals[0] == proposals[1]
    assert proposals[0].column("cnt").type is ColumnType.INTEGER


def test_text_is_cut_to_its_width_in_characters_not_bytes(tmp_path):
    """Multi-byte text: 'éé' (4 bytes) fits a width of 3 characters; 'ééééé' is cut to 3."""
    path = tmp_path / "t.csv"
    path.write_text("uid,n,x,s,c,d,f\n1,,,éé,,,\n2,,,ééééé,,,\n3,,,日本語日本,,,\n", encoding="utf-8")
    assert [r[3] for r in _read(path)] == ["éé", "ééé", "日本語"]


# -- no plan drops a row (issue 27, round 8) ----------------------------------------------------
# DuckDB 2's `type_pushdown` moves a cast of a CSV column into the reader's typed parse: a value
# that does not parse then drops its row (ignore_errors), even under TRY_CAST, and only when the
# plan has no operator between the scan and the cast. `guard_connection` disables it; these
# reads must keep every well-formed line, whatever its values and whatever the plan's shape.
NULLABLE = TableSchema(
    (
        ColumnFact("i", ColumnType.INTEGER),
        ColumnFact("x", ColumnType.FLOAT),
        ColumnFact("d", ColumnType.DATE),
        ColumnFact("t", ColumnType.TIMESTAMP),
        ColumnFact("b", ColumnType.BOOLEAN),
        ColumnFact("s", ColumnType.TEXT, max_length=2),
    ),
    max_rows=1000,
)
BAD_LINES = (
    "i,x,d,t,b,s\n"
    "1,1.5,2024-01-02,2024-01-02 03:04:05,true,ok\n"
    "x,2,2024-01-02,2024-01-02 03:04:05,false,ab\n"  # not an integer
    "2,x,2024-01-02,2024-01-02 03:04:05,true,ab\n"  # not a float
    "3,nan,2024-13-45,2024-01-02 03:04:05,true,ab\n"  # NaN, not a date
    "4,1,2024-01-02,yesterday,true,ab\n"  # not a timestamp
    "5,1,2024-01-02,2024-01-02 03:04:05,maybe,ab\n"  # not a boolean
    "1.5e,1e400,,,,élan\n"  # nothing fits; multi-byte text longer than the width
    '"6","7",x,x,x,"q""q"\n'
)


def _guarded(sql: str) -> list[tuple]:
    con = duckdb.connect()
    guard_connection(con)
    return con.execute(sql).fetchall()


def _reference(path, schema) -> list[tuple]:
    """The documented rule evaluated on an in-memory copy of the text (no reader to push into)."""
    con = duckdb.connect()
    con.execute(f"CREATE TABLE raw AS SELECT * FROM {source_sql(path, schema)}")
    return con.execute(typed_select(schema, "raw")).fetchall()


@pytest.mark.parametrize(
    "shape",
    [
        "SELECT * FROM ({r})",
        "SELECT i FROM ({r})",
        "SELECT x FROM ({r})",
        "SELECT count(x) AS n, count(*) AS rows FROM ({r})",
        "SELECT d, t, b FROM ({r}) WHERE s IS NOT NULL OR s IS NULL",
        "SELECT i, count(*) FROM ({r}) GROUP BY i",
    ],
)
def test_no_plan_drops_a_row_whose_value_does_not_fit(tmp_path, shape):
    path = tmp_path / "t.csv"
    path.write_text(BAD_LINES, encoding="utf-8")
    sql = shape.format(r=relation_sql(path, NULLABLE))
    reference = duckdb.connect()
    reference.execute(f"CREATE TABLE raw AS SELECT * FROM {source_sql(path, NULLABLE)}")
    expected = reference.execute(shape.format(r=typed_select(NULLABLE, "raw"))).fetchall()
    assert len(_reference(path, NULLABLE)) == 8  # every line is a row
    assert sorted(map(repr, _guarded(sql))) == sorted(map(repr, expected))


def test_load_and_write_declared_keep_every_row(tmp_path):
    """The public-table load and the Parquet handed to Spark: the same rows as the rule."""
    path = tmp_path / "t.csv"
    path.write_text(BAD_LINES, encoding="utf-8")
    expected = sorted(map(repr, _reference(path, NULLABLE)))
    frame = load_declared(path, NULLABLE)
    assert len(frame) == 8
    out = write_declared(path, NULLABLE, tmp_path / "t.parquet")
    written = duckdb.connect().execute(f"SELECT * FROM read_parquet('{out}')").fetchall()
    assert sorted(map(repr, written)) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(*[st.sampled_from(["1", "-2", " 3 ", "1.5", "1e3", "x", "", "nan", "inf",
                                     "2024-01-02", "2024-01-02 03:04:05", "true", "no", "élan",
                                     '"7"', '"a,b"', '"q""q"', "99999999999999999999"])] * 6),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from(["SELECT * FROM ({r})", "SELECT i, x FROM ({r})", "SELECT t FROM ({r})"]),
)  # fmt: skip
def test_the_guarded_read_equals_the_rule_on_random_values(tmp_path, rows, shape):
    """Old (the rule on the text copied in memory) and new (the file read in place) give the
    same table: no value drops a row, converts differently or fails the read."""
    path = tmp_path / "fuzz.csv"
    path.write_text("i,x,d,t,b,s\n" + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    reference = duckdb.connect()
    reference.execute(f"CREATE TABLE raw AS SELECT * FROM {source_sql(path, NULLABLE)}")
    expected = reference.execute(shape.format(r=typed_select(NULLABLE, "raw"))).fetchall()
    got = _guarded(shape.format(r=relation_sql(path, NULLABLE)))
    assert sorted(map(repr, got)) == sorted(map(repr, expected))


def test_every_module_reading_a_declared_relation_guards_its_connection():
    """DuckDB's `type_pushdown` turns the declared read's TRY_CAST into a dropped row or a failed
    query when nothing sits between the scan and the cast; `guard_connection` turns it off. A
    module that builds `relation_sql` must also call it (a static check: a new reader cannot
    forget)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    unguarded = []
    for top in ("core", "ui", "pages"):
        for path in sorted((root / top).rglob("*.py")):
            if path.name == "relation.py" and path.parent.name == "data":
                continue
            names = {
                n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
                for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, ast.Call)
            }
            if "relation_sql" in names and "guard_connection" not in names:
                unguarded.append(str(path.relative_to(root)))
    assert unguarded == []
