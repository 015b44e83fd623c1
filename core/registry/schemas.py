"""Declared public facts in the registry (issue 27): each table file's `TableSchema`, stated or
confirmed by the owner at registration, edited only by the owner, every change recorded with
its before and after. A mixin of `core.registry.registry.Registry`.

A declared schema must name the file's columns exactly (names and order, as the CSV header
read with the declared separator, or the Parquet footer without pandas' index columns):
checked from the header or footer alone, no value is read.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from core.data.declared import SchemaSource, TableSchema
from core.data.relation import is_parquet, propose
from core.errors import InputError
from core.registry.models import SchemaChange
from core.registry.store import now

REGISTERED_PROPOSED = "registered: proposed from the file"  # schema history notes
REGISTERED_DECLARED = "registered: declared by the owner"


def file_columns(path: str | Path, delimiter: str = ",") -> list[str]:
    """The column names a file declares: a Parquet footer (pandas' index columns left out, as
    `propose` does) or a CSV header line split by `delimiter`. No value is read."""
    path = Path(path)
    try:
        if is_parquet(path):
            import pyarrow.parquet as pq

            arrow = pq.read_schema(path)
            index = (arrow.pandas_metadata or {}).get("index_columns", []) or []
            hidden = {name for name in index if isinstance(name, str)}
            return [str(n) for n in arrow.names if n not in hidden]
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
            first = fh.readline(1 << 20)
        header = next(csv.reader([first.rstrip("\r\n")], delimiter=delimiter), [])
        return [name.strip() for name in header]
    except OSError as err:
        raise InputError(
            f"cannot read the header of {path.name}: {err.strerror or err}. Fix: check the path."
        ) from None
    except Exception as err:  # noqa: BLE001 - one line, no value quoted
        raise InputError(
            f"cannot read the header of {path.name} ({type(err).__name__}). Fix: give a CSV "
            "with a header line or a Parquet file."
        ) from None


def check_schema(table: str, path: str | Path, schema: TableSchema) -> TableSchema:
    """`schema` as stored for `table` (source: declared), refused unless its columns are the
    file's columns exactly, in the file's order."""
    found = file_columns(path, schema.delimiter)
    if schema.names != found:
        missing = [c for c in found if c not in schema.names]
        extra = [c for c in schema.names if c not in found]
        detail = "; ".join(
            part
            for part in (
                f"not in the file: {', '.join(extra)}" if extra else "",
                f"not declared: {', '.join(missing)}" if missing else "",
                "" if missing or extra else "the order differs",
            )
            if part
        )
        raise InputError(
            f"the schema of table '{table}' names columns {', '.join(schema.names)}; the file "
            f"{Path(path).name} has {', '.join(found) or 'none'} ({detail}). Fix: declare "
            "exactly the file's columns, in its order."
        )
    return replace(schema, source=SchemaSource.DECLARED)


def schemas_for(
    files: list[tuple[str, str]], given: Mapping[str, TableSchema] | None
) -> dict[str, TableSchema]:
    """{table: schema} for registration: each given schema checked against its file; every
    other table's proposed from what its file declares (`core.data.relation.propose`)."""
    given = dict(given or {})
    unknown = [t for t in given if t not in {name for name, _ in files}]
    if unknown:
        raise InputError(
            f"a schema was given for {', '.join(unknown)}, not a table of this dataset. Fix: "
            "name a table given with --table or --public."
        )
    out = {}
    for table, path in files:
        schema = given.get(table)
        out[table] = check_schema(table, path, schema if schema else propose(path))
    return out


class SchemaStore:
    """`set_schema`, `schema_history` (uses the registry's `_write`, `_read`, `dataset`)."""

    @staticmethod
    def _insert_schemas(con, dataset: str, schemas: Mapping[str, TableSchema], time: str, note):
        for table, schema in schemas.items():
            text = json.dumps(schema.to_json())
            con.execute("INSERT INTO table_schemas VALUES (?,?,?)", (dataset, table, text))
            con.execute(
                "INSERT INTO schema_changes(time, dataset, table_name, before, after, note) "
                "VALUES (?,?,?,?,?,?)",
                (time, dataset, table, None, text, note),
            )

    def _stored_schemas(self, dataset: str) -> dict[str, TableSchema]:
        rows = self._read(
            "SELECT name, schema FROM table_schemas WHERE dataset=? ORDER BY rowid", (dataset,)
        )
        return {name: TableSchema.from_json(json.loads(text)) for name, text in rows}

    def set_schema(
        self, dataset: str, table: str, schema: TableSchema, note: str = "edited"
    ) -> SchemaChange:
        """Store the owner's `schema` for `table` of `dataset` (checked against the file's
        header or footer), recorded in the schema history with the schema it replaces. The
        role is the caller's to check (the CLI refuses analysts)."""
        d = self.dataset(dataset)
        file = next((t for t in d.tables if t.name == table), None)
        if file is None:
            raise InputError(
                f"dataset '{dataset}' has no table '{table}' (tables: "
                f"{', '.join(t.name for t in d.tables)}). Fix: name one of them."
            )
        if not Path(file.path).is_file():
            raise InputError(
                f"table '{table}' of dataset '{dataset}' is missing: {file.path}. Fix: restore "
                "the file (its header is checked against the schema)."
            )
        schema = check_schema(table, file.path, schema)
        text = json.dumps(schema.to_json())
        time = now()
        with self._write() as con:
            row = con.execute(
                "SELECT schema FROM table_schemas WHERE dataset=? AND name=?", (dataset, table)
            ).fetchone()
            before = None if row is None else row[0]
            con.execute(
                "INSERT INTO table_schemas VALUES (?,?,?) ON CONFLICT(dataset, name) "
                "DO UPDATE SET schema=excluded.schema",
                (dataset, table, text),
            )
            cur = con.execute(
                "INSERT INTO schema_changes(time, dataset, table_name, before, after, note) "
                "VALUES (?,?,?,?,?,?)",
                (time, dataset, table, before, text, note),
            )
        return SchemaChange(
            cur.lastrowid,
            time,
            dataset,
            table,
            None if before is None else TableSchema.from_json(json.loads(before)),
            schema,
            note,
        )

    def schema_history(self, dataset: str, table: str | None = None) -> list[SchemaChange]:
        """Every registration and edit of `dataset`'s schemas (of `table` only, if given)."""
        sql = (
            "SELECT id, time, dataset, table_name, before, after, note FROM schema_changes "
            "WHERE dataset=?"
        )
        args: tuple = (dataset,)
        if table is not None:
            sql, args = sql + " AND table_name=?", (dataset, table)
        return [
            SchemaChange(
                i,
                time,
                d,
                t,
                None if before is None else TableSchema.from_json(json.loads(before)),
                TableSchema.from_json(json.loads(after)),
                note,
            )
            for i, time, d, t, before, after, note in self._read(sql + " ORDER BY id", args)
        ]
