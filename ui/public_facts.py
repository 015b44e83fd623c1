"""Where a registered dataset is chosen, the public facts its owner declared (issue 27): each
table's columns with their types, whether they may be missing, text widths, domains and bounds,
and its size class. They are public — every check an analyst's request meets reads them, never
the data — so analysts and owners see the same panel."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.data.declared import TableSchema


def schema_frame(schema: TableSchema) -> pd.DataFrame:
    """One row per declared column, in words a reader can check against the file."""
    rows = []
    for c in schema.columns:
        rows.append(
            {
                "column": c.name,
                "type": c.type.name.lower(),
                "may be missing": "yes" if c.nullable else "no",
                "max length": "" if c.max_length is None else f"{c.max_length:,}",
                "domain": "" if c.categories is None else " | ".join(c.categories),
                "bounds": "" if c.bounds is None else f"{c.bounds[0]:g} to {c.bounds[1]:g}",
            }
        )
    return pd.DataFrame(rows)


def markdown_table(frame: pd.DataFrame) -> str:
    """A small table as Markdown (a schema, not data: no data grid, no download button)."""
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(str(v).replace("|", "\\|") or " " for v in row) + " |")
    return "\n".join(lines)


def show_public_facts(dataset) -> None:
    """An expander with the dataset's declared schemas (or a note that none was declared)."""
    schemas = dict(getattr(dataset, "schemas", {}) or {})
    with st.expander("Public facts (declared by the owner)", expanded=False):
        if not schemas:
            st.warning(
                "No schema declared: this dataset was registered before schemas were. Its "
                f"owner declares one with `dpx dataset schema {dataset.name}`; until then "
                "analysts' queries on it are refused."
            )
            return
        st.caption(
            "Every accept, refuse, type and limit you meet follows from these facts alone, "
            "never from the data. A value that does not fit its column is read as missing; "
            "text longer than its width is cut."
        )
        for table in dataset.tables:
            schema = schemas.get(table.name)
            if schema is None:
                st.markdown(f"**{table.name}**: no schema declared.")
                continue
            kind = "public table" if table.public else "private table"
            st.markdown(
                f"**{table.name}** ({kind}) — at most {schema.max_rows:,} rows (size class)"
            )
            st.markdown(markdown_table(schema_frame(schema)))
