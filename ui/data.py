"""Choosing data: one chooser for all three tools, returning a typed `DataChoice`.

Three sources, the same labels and the same widget keys (prefixed by the tool) on every page:
a demo dataset, an upload (kept for the session, also across a reload: once on the server's disk
by its SHA-256, within a quota and a lifetime, `ui.upload_store`), or a dataset the owner
registered (`dpx dataset add`; its releases are charged to its budget). Analyst mode offers
registered datasets only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import pandas as pd
import streamlit as st

from core.data.declared import TableSchema
from core.data.demos import DemoDataset, demos_of_kind
from core.data.loading import MAX_UPLOAD_BYTES, load_table
from core.data.relation import load_declared
from core.errors import InputError
from core.registry import Dataset, Registry, TableFile
from ui import state, upload_store, upload_tables
from ui.budget import budget_line
from ui.public_facts import show_public_facts
from ui.shell import is_analyst
from ui.upload_store import StoredUpload
from ui.upload_tables import InPlaceTable

UPLOAD_TYPES = ["csv", "parquet", "pq"]


class Source(StrEnum):
    DEMO = "Demo dataset"
    UPLOAD = "Upload CSV/Parquet"
    REGISTERED = "Registered dataset"


class DemoKind(StrEnum):
    """Which tool's demos a chooser lists (`core.data.demos` kinds)."""

    POINTS = "points"
    TABLE = "table"
    SQL = "sql"


@dataclass(frozen=True)
class DataChoice:
    """The data a page works on.

    `key` names it in widget keys and recorded params: "demo:NAME", "upload:SHA256" (the
    owner's own file) or "registered:NAME" — never a registered file's hash, which reaches the
    browser as a CSS class and reports as a param, and is not DP. `fingerprint` is for cache
    keys only. `in_place`: uploads a page reads where they lie (`choose_data(in_place=True)`,
    the DP SQL page), by table name, instead of frames in `tables`."""

    source: Source
    key: str
    tables: Mapping[str, pd.DataFrame]
    public: frozenset[str] = frozenset()
    demo: DemoDataset | None = None
    registry: Registry | None = None
    dataset: Dataset | None = None
    fingerprint: str = ""
    file_names: tuple[str, ...] = field(default=())
    in_place: Mapping[str, InPlaceTable] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """Every table's name: the frames', then those read in place."""
        return [*self.tables, *self.in_place]

    def columns(self, name: str) -> list[str]:
        """Table `name`'s column names (of a table read in place: its schema's, no row read)."""
        if name in self.in_place:
            return self.in_place[name].columns
        return [str(c) for c in self.tables[name].columns]

    @property
    def cache_key(self) -> str:
        return f"{self.key}|{self.fingerprint}"

    @property
    def dataset_name(self) -> str | None:
        return None if self.dataset is None else self.dataset.name

    def one_table(self, tool_words: str) -> pd.DataFrame:
        """The single private table a one-table tool reads (an `InputError` otherwise)."""
        private = [n for n in self.tables if n not in self.public]
        if len(private) != 1:
            where = f"dataset '{self.dataset.name}'" if self.dataset else "this data"
            raise InputError(
                f"{tool_words} read one table, but {where} has {len(private)} private tables. "
                "The owner registers the table as its own dataset."
            )
        return self.tables[private[0]]


@st.cache_resource(show_spinner="Reading the upload…", max_entries=4, ttl=3600)
def _shared_upload(digest: str, name: str) -> pd.DataFrame:
    """An upload's table, read once from its one file on disk (`ui.upload_store`) and shared by
    every session that uploaded the same bytes (keyed by their SHA-256; bounded in entries and
    age). Never handed out itself: see `_load_upload`."""
    return load_table(StoredUpload(name, digest, 0).path, name=name, max_bytes=MAX_UPLOAD_BYTES)


def _load_upload(kept: StoredUpload) -> pd.DataFrame:
    """The shared table as a shallow copy: no data is copied, and pandas' copy-on-write keeps
    any change a page makes to its copy (a new column, a cast) out of the shared one."""
    upload_store.touch(kept)  # used now: its lifetime and eviction order start again
    return _shared_upload(kept.digest, kept.name).copy(deep=False)


@st.cache_resource(show_spinner=False, max_entries=4, ttl=3600)
def _shared_registered(sha256: str, path: str, schema_json: str | None) -> pd.DataFrame:
    """A registered table, read once by the fingerprint the registry verified and shared by
    every session (no size limit but the machine's, as for the CLI). With its declared schema
    (`schema_json`) it is read as declared (`core.data.relation`: the declared types whatever
    the file holds, a line that does not parse skipped), as the CLI reads it; a table
    registered before schemas were stored is read by inference, as before."""
    if schema_json is not None:
        schema = TableSchema.from_json(json.loads(schema_json))
        return load_declared(Path(path), schema)
    return load_table(Path(path), name=Path(path).name)


def _load_registered(dataset: Dataset, table: TableFile) -> pd.DataFrame:
    """The shared registered table as a copy-on-write shallow copy (see `_load_upload`)."""
    schema = dataset.schema(table.name)
    schema_json = None if schema is None else json.dumps(schema.to_json(), sort_keys=True)
    return _shared_registered(table.sha256, table.path, schema_json).copy(deep=False)


@st.cache_data(show_spinner="Loading the demo…", max_entries=8, ttl=3600)
def _load_demo(name: str, kind: str) -> dict[str, pd.DataFrame]:
    demo = next(d for d in demos_of_kind(kind) if d.name == name)
    loaded = demo.load()
    return dict(loaded) if isinstance(loaded, dict) else {name: loaded}


def table_name(file_name: str) -> str:
    """A SQL-safe table name from a file name (its stem, other characters as '_')."""
    return "".join(c if c.isalnum() else "_" for c in Path(file_name).stem) or "t"


def choose_data(
    tool: str,
    kind: DemoKind,
    *,
    multiple: bool = False,
    public_tables: Mapping[str, frozenset[str]] | None = None,
    upload_help: str = "one row per person",
    in_place: bool = False,
) -> DataChoice:
    """The chooser: a radio of sources, then the demo, upload or registered dataset. Stops the
    page (with a line saying what to do) until there is data. Widget keys: `{tool}_source`,
    `{tool}_demo`, `{tool}_upload`, `{tool}_dataset`. `in_place`: uploads are not loaded but
    given as `DataChoice.in_place` tables (`ui.upload_tables`), for a page whose engine reads
    them where they lie."""
    sources = [Source.REGISTERED] if is_analyst() else list(Source)
    labels = [s.value for s in sources]
    picked = st.radio(
        "Data", labels, horizontal=True, key=state.kept(f"{tool}_source", labels, labels[0])
    )
    source = Source(picked)
    if source is Source.REGISTERED:
        return _registered(tool)
    if source is Source.DEMO:
        return _demo(tool, kind, public_tables or {})
    return _upload(tool, multiple, upload_help, in_place)


def _demo(tool: str, kind: DemoKind, public_tables: Mapping[str, frozenset[str]]) -> DataChoice:
    demos = demos_of_kind(kind.value)
    names = [d.name for d in demos]
    by_name = {d.name: d for d in demos}
    name = st.selectbox(
        "Demo dataset",
        names,
        format_func=lambda n: f"{n} — {by_name[n].description}",
        persist_state="session",
        key=state.kept(f"{tool}_demo", names, names[0]),
    )
    demo = by_name[name]
    st.caption(f"Source: {demo.source}. Licence: {demo.licence}.")
    return DataChoice(
        Source.DEMO,
        f"demo:{name}",
        _load_demo(name, kind.value),
        public=frozenset(public_tables.get(name, frozenset())),
        demo=demo,
    )


def _upload(tool: str, multiple: bool, upload_help: str, in_place: bool) -> DataChoice:
    files = kept_uploads(tool, multiple)
    if not files:
        st.info(
            "Upload "
            + ("one file per table (the file name is the table name)" if multiple else "a file")
            + f" ({upload_help}), or pick a demo dataset."
        )
        st.stop()
    key = "upload:" + ",".join(f.digest for f in files)
    names = tuple(f.name for f in files)
    if in_place:
        read = {table_name(f.name): upload_tables.in_place_table(f) for f in files}
        return DataChoice(Source.UPLOAD, key, {}, fingerprint=key, file_names=names, in_place=read)
    tables = {table_name(f.name): _load_upload(f) for f in files}
    return DataChoice(Source.UPLOAD, key, tables, fingerprint=key, file_names=names)


def kept_uploads(tool: str, multiple: bool) -> list[StoredUpload]:
    """The uploaded files, kept for the session: after navigating away and back (or a reload)
    the uploader is empty, so the page keeps the files uploaded earlier and says so; "Forget"
    drops them. A new upload replaces them.

    A file over the size limit is refused from its size before a byte of it is read or stored.
    The bytes are kept once on the server's disk by their SHA-256 (`ui.upload_store`, within
    its quota and lifetime, stated in a caption); the session keeps only (name, digest, size)."""
    key = f"{tool}_upload"
    kept_key = key + "::files"
    up = st.file_uploader(
        "Tables (CSV or Parquet)" if multiple else "File (CSV or Parquet)",
        type=UPLOAD_TYPES,
        accept_multiple_files=multiple,
        key=key,
    )
    st.caption(upload_store.quota_caption())
    uploaded = (up or []) if multiple else ([up] if up is not None else [])
    if uploaded:
        try:
            for f in uploaded:  # every size first: one file too large, none of them is stored
                upload_store.check_size(f.name, f.size)
            files = [_stored(key, f) for f in uploaded]
        except InputError as err:
            st.error(str(err))
            st.stop()
        refs = [(f.name, f.digest, f.size) for f in files]
        if state.get(kept_key) != refs:
            names = ", ".join(f.name for f in files)
            state.put(kept_key, refs, f"the uploaded file(s) {names}")
        return files
    refs = state.get(kept_key)
    files = _kept_files(refs)
    if files and refs != [(f.name, f.digest, f.size) for f in files]:
        state.put(kept_key, [(f.name, f.digest, f.size) for f in files], "the uploaded file(s)")
    if files is None or any(not f.exists() for f in files):
        state.drop(kept_key)
        st.warning(
            "The file(s) uploaded earlier in this session are no longer kept on the server "
            f"(uploads are kept {upload_store.LIFETIME_S // 3600} hours after their last use, "
            f"{upload_store.QUOTA_BYTES // 1024**3} GB for all sessions; the least recently "
            "used go first). Upload them again."
        )
        return []
    if files:
        c1, c2 = st.columns([4, 1])
        c1.caption(
            "Using the file(s) uploaded earlier in this session: "
            + ", ".join(f"**{f.name}**" for f in files)
            + "."
        )
        if c2.button("Forget", key=key + "::forget"):
            state.drop(kept_key)
            st.rerun()
    return files


def _stored(key: str, file) -> StoredUpload:
    """An uploaded file (Streamlit's `UploadedFile`) kept on disk: its size is checked first;
    the same file seen on an earlier run of this session is not hashed again."""
    upload_store.check_size(file.name, file.size)
    seen = st.session_state.setdefault(key + "::seen", {})  # file id -> StoredUpload
    file_id = getattr(file, "file_id", None)
    if file_id in seen and seen[file_id].exists():
        return seen[file_id]
    # getvalue(), not getbuffer(): a BytesIO still sharing the bytes it was made from copies
    # them all for getbuffer(); getvalue() hands out its buffer as it is
    kept = upload_store.store(file.name, file.getvalue(), file.size)
    if file_id:
        if len(seen) >= 32:  # bounded: the ids of this session's recent uploads
            seen.clear()
        seen[file_id] = kept
    return kept


def _kept_files(refs) -> list[StoredUpload] | None:
    """The session's kept (name, digest, size) as `StoredUpload`s; None for anything else. A
    session kept by an older version held (name, bytes): those bytes move to the upload store
    (within its limits) and the session keeps their digest from then on."""
    if not refs:
        return []
    try:
        if all(isinstance(r[1], bytes | bytearray) for r in refs):
            return [upload_store.store(str(n), data) for n, data in refs]
        files = [StoredUpload(str(n), str(d), int(z)) for n, d, z in refs]
    except (TypeError, ValueError, IndexError, InputError):
        return None
    return files if all(re.fullmatch(r"[0-9a-f]{64}", f.digest) for f in files) else None


def _registered(tool: str) -> DataChoice:
    try:
        registry = Registry()
    except InputError as err:
        st.error(str(err))
        st.stop()
    datasets = registry.datasets()
    if not datasets:
        st.info(
            "No registered dataset. The data owner registers one with "
            "`dpx dataset add NAME --table T=FILE --uid COL --epsilon E`."
        )
        st.stop()
    names = [d.name for d in datasets]
    # persist_state: the picker sits behind the source choice; when hidden, keep the choice
    name = st.selectbox(
        "Registered dataset",
        names,
        persist_state="session",
        key=state.kept(f"{tool}_dataset", names, names[0]),
    )
    dataset = registry.dataset(name)
    registry.verify_files(dataset)  # a changed file raises InputError (shown by user_errors)
    budget_line(registry, dataset)
    show_public_facts(dataset)
    tables = {t.name: _load_registered(dataset, t) for t in dataset.tables}
    fingerprint = ",".join(sorted(f"{t.name}:{t.sha256}" for t in dataset.tables))
    return DataChoice(
        Source.REGISTERED,
        f"registered:{dataset.name}",
        tables,
        public=frozenset(t.name for t in dataset.public_tables),
        registry=registry,
        dataset=dataset,
        fingerprint=fingerprint,
    )
