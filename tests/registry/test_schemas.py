"""Declared public facts in the registry (issue 27 item 1): each table's `TableSchema` is stored
at registration (given by the owner, or proposed from what the file declares), read back
typed, edited only through `set_schema` with every change recorded, and never derived from the
values: neighbouring files (one row more, holding a NULL) get the same declared schema."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core.data.declared import ColumnFact, ColumnType, SchemaSource, TableSchema
from core.errors import InputError
from core.registry import Policy, Registry
from core.registry.store import FILE_NAME
from tests.registry.helpers import as_v3_registry


@pytest.fixture
def reg(tmp_path) -> Registry:
    return Registry(tmp_path / "reg")


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("uid,age,region\n1,34,north\n2,51,south\n3,27,north\n")
    return path


def _add(reg, path, name="d", **kw):
    return reg.add_dataset(name, [("t", path)], Policy(5.0), uid="uid", **kw)


def test_a_proposed_schema_is_stored_and_read_back_typed(reg, table, tmp_path):
    d = _add(reg, table)
    schema = d.schema("t")
    assert isinstance(schema, TableSchema) and schema.source is SchemaSource.DECLARED
    assert schema.types() == {"uid": "BIGINT", "age": "BIGINT", "region": "VARCHAR"}
    reg.close()
    again = Registry(tmp_path / "reg").dataset("d")  # a new process reads the same facts
    assert again.schemas == {"t": schema} and again == d
    history = Registry(tmp_path / "reg").schema_history("d")
    assert [(c.table, c.before, c.after, c.note) for c in history] == [
        ("t", None, schema, "registered: proposed from the file")
    ]


def test_a_given_schema_is_stored_as_declared(reg, table):
    given = TableSchema(
        (
            ColumnFact("uid", ColumnType.INTEGER, nullable=False),
            ColumnFact("age", ColumnType.INTEGER, bounds=(0, 120)),
            ColumnFact("region", ColumnType.TEXT, max_length=8, categories=("north", "south")),
        ),
        max_rows=10**6,
        source=SchemaSource.INFERRED,  # whatever the caller says, the registry stores DECLARED
    )
    d = _add(reg, table, schemas={"t": given})
    stored = reg.dataset("d").schema("t")
    assert stored.columns == given.columns and stored.max_rows == 10**6
    assert stored.source is SchemaSource.DECLARED and d.schema("t") == stored


@pytest.mark.parametrize(
    "names, needle",
    [
        (("uid", "age"), "not declared: region"),
        (("uid", "age", "region", "extra"), "not in the file: extra"),
        (("uid", "region", "age"), "the order differs"),
        (("UID", "age", "region"), "not in the file: UID"),
    ],
)
def test_a_given_schema_must_name_the_files_columns_exactly(reg, table, names, needle):
    wrong = TableSchema(tuple(ColumnFact(n, ColumnType.TEXT) for n in names), max_rows=1000)
    with pytest.raises(InputError, match=needle) as info:
        _add(reg, table, schemas={"t": wrong})
    assert "Fix:" in str(info.value) and "\n" not in str(info.value)
    assert reg.datasets() == []  # nothing registered


def _parquet(path, ages):
    schema = pa.schema([pa.field("uid", pa.int64()), pa.field("age", pa.int64())])
    pq.write_table(pa.table({"uid": list(range(len(ages))), "age": ages}, schema=schema), path)
    return path


def test_neighbouring_parquet_files_get_identical_declared_schemas(reg, tmp_path):
    """An attacker adds one person whose age is NULL: a value-based reader (pandas turns an
    integer column with a missing value into float64) would change the declared type, and
    with it every message an analyst sees. The proposal reads the Parquet logical type."""
    without = _parquet(tmp_path / "a.parquet", [30, 41, 25])
    with_null = _parquet(tmp_path / "b.parquet", [30, 41, 25, None])
    a = _add(reg, without, name="a").schema("t")
    b = _add(reg, with_null, name="b").schema("t")
    assert a == b
    assert a.column("age").type is ColumnType.INTEGER and a.column("age").nullable


def test_set_schema_records_before_and_after(reg, table):
    d = _add(reg, table)
    before = d.schema("t")
    edited = before.with_column(ColumnFact("age", ColumnType.INTEGER, bounds=(0, 120)))
    change = reg.set_schema("d", "t", edited, note="--set age=integer,bounds=0:120")
    assert change.before == before and change.after == edited
    assert reg.dataset("d").schema("t").column("age").bounds == (0.0, 120.0)
    history = reg.schema_history("d", "t")
    assert [(c.before, c.after) for c in history] == [(None, before), (before, edited)]
    assert history[-1].note == "--set age=integer,bounds=0:120"


def test_set_schema_refuses_columns_that_are_not_the_files(reg, table):
    d = _add(reg, table)
    wrong = TableSchema((ColumnFact("uid", ColumnType.INTEGER),), max_rows=1000)
    with pytest.raises(InputError, match="not declared: age, region"):
        reg.set_schema("d", "t", wrong)
    with pytest.raises(InputError, match="no table 'x'"):
        reg.set_schema("d", "x", d.schema("t"))
    assert reg.dataset("d").schema("t") == d.schema("t") and len(reg.schema_history("d")) == 1


def test_a_registry_from_before_v4_gets_no_schema_and_is_not_read(reg, table, tmp_path):
    """The migration cannot read files safely: a dataset registered before v4 has no schema
    (its consumer proposes one, labelled inferred) until the owner declares one."""
    _add(reg, table)
    reg.close()
    as_v3_registry(tmp_path / "reg" / FILE_NAME)
    table.write_text("not,the,same\n")  # the migration must not read the file
    old = Registry(tmp_path / "reg").dataset("d")
    assert old.schemas == {} and old.schema("t") is None
