"""The one setting that lets a locked DuckDB sandbox open exactly the registered files.

Tables read in place are views over `read_csv` / `read_parquet` that convert each value into its
declared type (`core.data.relation`); the files' paths are the only ones the sandbox may open
(`allowed_paths`, set before the configuration is locked): generated SQL can read the registered
files through their views and no other file.
"""

from __future__ import annotations

from pathlib import Path

from core.data.relation import identifier, literal

__all__ = ["FLOAT_TYPES", "allow", "identifier", "literal"]

FLOAT_TYPES = {"FLOAT", "DOUBLE"}  # DuckDB's floating types (PP's file scan reads them)


def allow(paths: list[Path]) -> str:
    """The setting that lets the locked sandbox open exactly `paths` (and nothing else)."""
    return f"SET allowed_paths = [{', '.join(literal(str(p)) for p in paths)}]"
