"""The DP SQL page's tables step: which tables are public, what the privacy unit is (never
guessed), the catalog the query runs on, and (owner only) previews and checks of the unit."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.dpsql.catalog import ROW_ID_COLUMN, UNIT_EXPLANATION, Catalog, unit_column_concerns
from core.dpsql.tables import catalog_of_files, catalog_of_frames
from ui import upload_tables
from ui.data import DataChoice, Source
from ui.shell import is_analyst
from ui.state import kept, persist

UNIT_COLUMN, UNIT_ROW = "A column says whose data each row is", "Each row is one person"


@dataclass(frozen=True)
class SqlData:
    """The catalog a query runs on, and how it is named in keys and params."""

    catalog: Catalog
    names: tuple[str, ...]
    public: frozenset[str]
    private: tuple[str, ...]
    uid: str
    row_is_unit: bool
    key: str  # data, public tables and unit: recorded with each run
    engine_key: str  # the key plus the files' fingerprint: a re-registered file, a new engine

    @property
    def columns(self) -> list[str]:
        """The private tables' columns other than the unit (for the builder)."""
        cols = {c for n in self.private for c in self.catalog.get(n).columns}
        return sorted(cols - {self.uid})


def choose_tables(choice: DataChoice) -> SqlData:
    names = choice.names
    if choice.dataset is None:
        public = set(
            st.multiselect(
                "Public tables (no privacy unit; joined freely)", names,
                persist_state="session",
                key=kept(f"dpsql_public_{choice.key}", names, sorted(choice.public)),
            )
        )  # fmt: skip
    else:
        public = set(choice.public)
        shown = ", ".join(f"`{n}`" for n in sorted(public)) or "none"
        st.caption(f"Public tables (registered): {shown}")
    private = [n for n in names if n not in public]
    if not private:
        st.error("Mark at least one table as private: a DP query reads a private table.")
        st.stop()
    unit_kind, uid = _unit(choice, private)
    catalog = _catalog(choice, public, None if unit_kind == UNIT_ROW else uid)
    for n in private:
        if unit_kind != UNIT_ROW and choice.source is Source.UPLOAD and not is_analyst():
            spec = catalog.get(n)
            concerns = (
                upload_tables.unit_concerns(spec, uid)
                if spec.in_place
                else unit_column_concerns(n, choice.tables[n], uid)
            )
            for concern in concerns:
                st.warning(f"Owner check (reads the data, not released): {concern}")
    key = f"{choice.key}|public={sorted(public)}|unit={unit_kind}:{uid}"
    return SqlData(
        catalog, tuple(names), frozenset(public), tuple(private), uid, unit_kind == UNIT_ROW,
        key, f"{key}|{choice.fingerprint}",
    )  # fmt: skip


def _catalog(choice: DataChoice, public: set[str], uid: str | None) -> Catalog:
    """The query's catalogue: uploads read in place with the schema proposed from each file
    (labelled inferred; `ui.upload_tables`), other data as frames (a registered dataset's
    converted into its declared schemas)."""
    if choice.in_place:
        files = {n: t.path for n, t in choice.in_place.items()}
        return catalog_of_files(
            [(n, p) for n, p in files.items() if n not in public],
            [(n, p) for n, p in files.items() if n in public],
            uid, row_is_unit=uid is None,
            schemas={n: t.schema for n, t in choice.in_place.items()},
        )  # fmt: skip
    return catalog_of_frames(
        {n: choice.tables[n] for n in choice.names}, public, uid, row_is_unit=uid is None,
        schemas=declared_schemas(choice),
    )  # fmt: skip


def declared_schemas(choice: DataChoice) -> dict:
    """A registered dataset's declared schemas by table (the types every check uses); none for
    demos (owner mode: inferred from the data, labelled; uploads are read in place, `_catalog`)."""
    if choice.dataset is None:
        return {}
    return dict(getattr(choice.dataset, "schemas", {}) or {})


def _unit(choice: DataChoice, private: list[str]) -> tuple[str, str]:
    if choice.dataset is not None:  # the owner declared the unit when registering the dataset
        if choice.dataset.uid:
            st.caption(
                f"Privacy unit: `{choice.dataset.uid}` (registered with dataset "
                f"'{choice.dataset.name}')."
            )
            return UNIT_COLUMN, choice.dataset.uid
        if choice.dataset.row_is_unit:
            st.caption(f"Privacy unit: one row (registered with dataset '{choice.dataset.name}').")
            return UNIT_ROW, ROW_ID_COLUMN
        st.error(
            f"Dataset '{choice.dataset.name}' has no privacy-unit column: DP SQL needs one. The "
            "owner registers it with `dpx dataset add ... --uid COL` (or `--row-is-unit`)."
        )
        st.stop()
    if choice.source is Source.DEMO:  # the demo declares its unit (see its description)
        st.caption("Privacy unit: `uid` (declared by the demo dataset).")
        return UNIT_COLUMN, "uid"
    st.markdown(f"**Privacy unit.** {UNIT_EXPLANATION}")  # an upload: never guessed
    unit_kind = st.radio(
        "What is the privacy unit?", [UNIT_COLUMN, UNIT_ROW], index=None, horizontal=True,
        persist_state="session", key=persist(f"dpsql_unit_kind_{choice.key}"),
    )  # fmt: skip
    if unit_kind == UNIT_ROW:
        st.info(
            f"Added a row-id column `{ROW_ID_COLUMN}` to each private table: every row is "
            "treated as a different person. If one person can have several rows, the "
            "guarantee protects single rows, not people."
        )
        return UNIT_ROW, ROW_ID_COLUMN
    uid = None
    if unit_kind == UNIT_COLUMN:
        common = sorted(set.intersection(*(set(choice.columns(n)) for n in private)))
        if not common:
            st.error(
                "The private tables share no column, so no column can name the unit of all of "
                f"them. Choose “{UNIT_ROW}” or mark tables as public."
            )
            st.stop()
        uid = st.selectbox(
            "Privacy-unit column (whose data each row is)", common, index=None,
            placeholder="choose the column…", persist_state="session",
            key=kept(f"dpsql_uid_{choice.key}", common),
        )  # fmt: skip
    if unit_kind is None or uid is None:
        st.info("Choose the privacy unit to continue: nothing is guessed.")
        st.stop()
    return UNIT_COLUMN, uid


def previews(data: SqlData) -> None:
    """Raw rows and exact row counts (of a table read in place: its first rows, no count, as
    reading them costs a pass over the file): owner only."""
    if is_analyst():
        return
    with st.expander("Table previews"):
        for n in data.names:
            role = "public" if n in data.public else f"private (unit: {data.uid})"
            spec = data.catalog.get(n)
            if spec.in_place:
                st.write(
                    f"**{n}** — {role}, read in place; its first rows (owner view; column "
                    "types proposed from the file, inferred)"
                )
                st.dataframe(upload_tables.preview(spec), hide_index=True)
                continue
            frame = spec.frame
            st.write(f"**{n}** — {role}, {len(frame):,} rows (owner view)")
            st.dataframe(frame.head(5), hide_index=True)
