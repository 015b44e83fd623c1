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
from core.data.relation import propose, relation_sql

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
    return duckdb.connect().execute(relation_sql(path, schema) + " ORDER BY uid").fetchall()


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
