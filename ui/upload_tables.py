"""Uploads read where they lie (issue 29 item 2): the DP SQL page never loads an upload into
pandas. The one stored file (`ui.upload_store`, by SHA-256) is checked and given a schema once —
proposed from what the file declares (`core.data.relation.inferred`: Parquet's logical types, a
typed read of a CSV sample; labelled inferred, owner mode only) and shared by every session
that uploaded the same bytes — and the engine reads it in place in that schema.

What the page shows of it reads a bounded prefix (the column names are the schema's; the owner's
preview is the first rows); the owner's checks of a unit column are counted by DuckDB over the
file (one streaming pass, a few numbers back), never a frame of the table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from core.data.declared import TableSchema
from core.data.loading import check_file
from core.data.relation import guard_connection, identifier, inferred, relation_sql
from core.dpsql.catalog import TableSpec, unit_count_concerns
from core.errors import InputError
from ui import upload_store
from ui.upload_store import StoredUpload

PREVIEW_ROWS = 5


@dataclass(frozen=True)
class InPlaceTable:
    """An uploaded table as the DP SQL page uses it: its stored file (read in place) and the
    schema proposed from it once (labelled inferred). No rows."""

    file_name: str
    path: Path
    schema: TableSchema

    @property
    def columns(self) -> list[str]:
        return self.schema.names


def in_place_table(kept: StoredUpload) -> InPlaceTable:
    """The stored upload `kept` with its shared schema (a bad file: one `InputError` line)."""
    upload_store.touch(kept)  # used now: its lifetime and eviction order start again
    return InPlaceTable(kept.name, kept.path, shared_schema(kept.digest, kept.name))


def shared_schema(digest: str, name: str) -> TableSchema:
    """The schema of the upload with SHA-256 `digest`, proposed once per file for all sessions
    (`name`, the uploader's file name, only words a refusal)."""
    return _proposed(digest, _name=name)


@st.cache_resource(show_spinner="Reading the upload's columns…", max_entries=64, ttl=3600)
def _proposed(digest: str, _name: str) -> TableSchema:
    """Check the stored file (a bounded prefix; CSV text streamed for UTF-8, never held whole),
    propose its schema from what it declares, and refuse a file with no data row (read up to
    its first row). Keyed by the digest only: a refusal is not cached."""
    path = StoredUpload(_name, digest, 0).path
    try:
        if not path.is_file():
            raise InputError(f"{_name} is no longer kept on the server. Fix: upload it again.")
        check_file(path, _name)
        schema = inferred(path)
        if _head(path, schema, 1).empty:
            raise InputError(f"{_name} has a header but no data rows.")
    except InputError as err:  # the stored file's name is its digest: say the upload's name
        raise InputError(str(err).replace(digest, _name)) from None
    return schema


def _head(path: Path, schema: TableSchema, rows: int) -> pd.DataFrame:
    """The first `rows` rows in the schema's types (DuckDB stops reading once it has them)."""
    import duckdb

    con = duckdb.connect()
    try:
        con.execute("SET threads = 1")
        guard_connection(con)  # the declared read stays total (core.data.relation)
        return con.execute(f"SELECT * FROM ({relation_sql(path, schema)}) LIMIT {int(rows)}").df()
    except duckdb.Error as err:
        raise InputError(
            f"the upload could not be read in its proposed schema ({type(err).__name__}). "
            "Fix: upload a UTF-8 CSV with a header line or a Parquet file."
        ) from None
    finally:
        con.close()


def preview(spec: TableSpec) -> pd.DataFrame:
    """The owner's preview of a table read in place: its first rows (a bounded prefix)."""
    return _preview(str(spec.source), _schema_key(spec.declared))


@st.cache_data(show_spinner=False, max_entries=16, ttl=3600)
def _preview(path: str, schema_json: str) -> pd.DataFrame:
    schema = TableSchema.from_json(json.loads(schema_json))
    return _head(Path(path), schema, PREVIEW_ROWS)


def unit_concerns(spec: TableSpec, uid: str) -> list[str]:
    """The owner's checks of the unit column `uid` of a table read in place
    (`core.dpsql.catalog.unit_count_concerns`), counted by DuckDB over the file once per file,
    schema and column."""
    rows, missing, distinct = _unit_counts(str(spec.source), _schema_key(spec.declared), uid)
    return unit_count_concerns(spec.name, uid, rows, missing, distinct)


@st.cache_data(show_spinner="Checking the unit column…", max_entries=16, ttl=3600)
def _unit_counts(path: str, schema_json: str, uid: str) -> tuple[int, int, int]:
    import duckdb

    schema = TableSchema.from_json(json.loads(schema_json))
    column = identifier(uid)
    con = duckdb.connect()
    try:
        guard_connection(con)  # the declared read stays total (core.data.relation)
        rows, present, distinct = con.execute(
            f"SELECT count(*), count({column}), count(DISTINCT {column}) "
            f"FROM ({relation_sql(Path(path), schema)})"
        ).fetchone()
    finally:
        con.close()
    return int(rows), int(rows) - int(present), int(distinct)


def _schema_key(schema: TableSchema | None) -> str:
    if schema is None:
        raise InputError("a table read in place needs its schema.")
    return json.dumps(schema.to_json(), sort_keys=True)
