"""Downloads, one way: a button that needs no rerun (a rerun right after the click could cancel
the browser's fetch), and files made with seeded noise that say so in their name AND in their
header: a seeded CSV gets a first column `SEEDED-demo-not-private` (plain CSV that any reader
reads as is — no comment lines; PP's `Publication.csv()` writes the same column itself) and
its file name carries `SEEDED-demo-not-private`.
"""

from __future__ import annotations

import csv
import io
from pathlib import PurePath

from core.privacy import SEEDED_LABEL

SEEDED_MARKER = "SEEDED-demo-not-private"
SEEDED_COLUMN = SEEDED_MARKER  # the same header column as core.balancing.names


def seeded_name(file_name: str, seeded: bool) -> str:
    """`file_name` with `SEEDED_MARKER` before its suffix when `seeded` (unless it already says
    SEEDED, as the tools' own seeded names do)."""
    if not seeded or "SEEDED" in file_name:
        return file_name
    path = PurePath(file_name)
    return f"{path.stem}.{SEEDED_MARKER}{path.suffix}"


def seeded_csv(text: str, seed: int | None) -> str:
    """A CSV whose header says it was made with seeded noise: a first column `SEEDED_COLUMN`
    holding "seed S: <the seeded label>" on every row."""
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or (rows[0] and rows[0][0].startswith("SEEDED")):  # already says so
        return text
    mark = f"seed {seed}: {SEEDED_LABEL}"
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([SEEDED_COLUMN, *rows[0]])
    for row in rows[1:]:
        writer.writerow([mark, *row])
    return out.getvalue()


def download(
    where,
    label: str,
    data: str | bytes,
    file_name: str,
    mime: str,
    key: str,
    *,
    seed: int | None = None,
    help: str | None = None,  # noqa: A002 - Streamlit's name
) -> None:
    """A download button in `where` (`st` or a column). `seed` set: the file was made with
    seeded noise — its name says so, and a CSV's header too."""
    seeded = seed is not None
    if seeded and mime == "text/csv" and isinstance(data, str):
        data = seeded_csv(data, seed)
    where.download_button(
        label,
        data,
        seeded_name(file_name, seeded),
        mime,
        key=key,
        on_click="ignore",
        help=help,
    )
