"""The table catalogue: which registered tables are private (with their uid) and which public."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from core.data.loading import load_table
from core.errors import InputError


@dataclass(frozen=True)
class TableSpec:
    name: str
    frame: pd.DataFrame = field(repr=False)
    private: bool
    uid: str | None

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.frame.columns]


class Catalog:
    """Registered tables by (case-insensitive) name. Private tables declare their uid column."""

    def __init__(self) -> None:
        self._tables: dict[str, TableSpec] = {}

    def add_private(self, name: str, frame: pd.DataFrame, uid: str) -> TableSpec:
        if uid not in frame.columns:
            raise InputError(
                f"table '{name}' has no privacy-unit column '{uid}'. Columns: "
                f"{', '.join(map(str, frame.columns))}. Fix: pass the right --uid column."
            )
        return self._add(TableSpec(name, _clean(frame), True, uid))

    def add_public(self, name: str, frame: pd.DataFrame) -> TableSpec:
        return self._add(TableSpec(name, _clean(frame), False, None))

    def add_file(self, name: str, path, uid: str | None, private: bool = True) -> TableSpec:
        frame = load_table(path, name=name)
        return self.add_private(name, frame, uid) if private else self.add_public(name, frame)

    def _add(self, spec: TableSpec) -> TableSpec:
        if not spec.name.isidentifier():
            raise InputError(
                f"table name '{spec.name}' is not a plain identifier. Fix: use letters, digits "
                "and underscores, e.g. orders."
            )
        self._tables[spec.name.lower()] = spec
        return spec

    def get(self, name: str) -> TableSpec | None:
        return self._tables.get(name.lower())

    def names(self) -> list[str]:
        return [t.name for t in self._tables.values()]

    def tables(self) -> list[TableSpec]:
        return list(self._tables.values())

    def uid_names(self) -> set[str]:
        return {t.uid for t in self._tables.values() if t.private and t.uid}


def _clean(frame: pd.DataFrame) -> pd.DataFrame:
    """NaN and ±inf become NULL at load time (spec §2.4: they are NULL at row level).
    Categorical columns become plain values: DuckDB would load them as ENUM types whose
    category list (data, not schema) appears in type and error messages."""
    out = frame.copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(out[col].cat.categories.dtype)
        if pd.api.types.is_float_dtype(out[col]):
            values = out[col].to_numpy(dtype=float, na_value=np.nan)
            out[col] = np.where(np.isfinite(values), values, np.nan)
    return out
