"""A table's column names from its header or footer alone: no value is read.

Used before anything is charged (a named column that does not exist is refused uncharged) and
at registration (the unit column must exist in every private table).
"""

from __future__ import annotations

from pathlib import Path

from core.errors import InputError


def columns_of(path: str | Path) -> list[str]:
    """The column names of a CSV (header line, separator sniffed from a bounded sample) or
    Parquet (footer) file. Nothing after a CSV's header line decides the answer, so a private
    row cannot change it (or make it fail)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"file not found: {path}. Fix: check the path.")
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return [str(c) for c in pq.read_schema(path).names]
        from core.data.relation import csv_header

        return csv_header(Path(path), header_only=True)[1]  # no data line is decoded
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - one line, no value quoted
        raise InputError(
            f"cannot read the header of {path.name}: {type(err).__name__}. Fix: give a CSV "
            "with a header line or a Parquet file."
        ) from None


def require_columns(path: str | Path, wanted: dict[str, str | None], table: str = "") -> None:
    """Refuse a named column (role -> name) that the file's header does not have."""
    columns = columns_of(path)
    for role, name in wanted.items():
        if name is not None and name not in columns:
            where = f" '{table}'" if table else ""
            raise InputError(
                f"{role} column '{name}' is not in the table{where} (columns: "
                f"{', '.join(columns)}). Nothing was charged."
            )
