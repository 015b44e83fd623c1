"""The DP SQL catalogue of a request, built from public facts only (issue 27).

A registered dataset's tables come with the schemas its owner declared (`Dataset.schemas`);
files given directly (owner mode) get a schema proposed from what each file declares
(`core.data.relation.inferred`: Parquet's logical types, a typed read of a CSV sample),
labelled inferred. Either way every table is read in place by the engine, each value converted
into its column's type, and every check reads the schema, never the data.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from core.data.declared import TableSchema
from core.data.relation import inferred
from core.dpsql.catalog import Catalog
from core.errors import InputError


def catalog_of_files(
    private: list[tuple[str, str | Path]],
    public: list[tuple[str, str | Path]] = (),
    uid: str | None = None,
    row_is_unit: bool = False,
    schemas: dict[str, TableSchema] | None = None,
) -> Catalog:
    """A catalogue of files read in place: each with its schema from `schemas` (by table name)
    or, for a file given directly by the owner, one inferred from the file's declared types."""
    if not private:
        raise InputError(
            "DPX-C004 dpx sql needs at least one private table. Fix: add --table NAME=FILE "
            "with --uid COL (or --row-is-unit)."
        )
    schemas = schemas or {}
    catalog = Catalog()
    for name, path in private:
        schema = schemas.get(name) or inferred(path)
        catalog.add_declared(name, path, schema, uid, private=True, row_is_unit=row_is_unit)
    for name, path in public:
        catalog.add_declared(name, path, schemas.get(name) or inferred(path), private=False)
    return catalog


def catalog_of_dataset(dataset, owner: bool) -> Catalog:
    """A registered dataset's catalogue with its declared schemas. A table without one (a
    registry made before schemas were declared) is read with an inferred schema by its owner
    only; an analyst is refused until the owner declares it."""
    schemas = dict(getattr(dataset, "schemas", {}) or {})
    missing = [t.name for t in dataset.tables if t.name not in schemas]
    if missing and not owner:
        raise InputError(
            f"DPX-C016 dataset '{dataset.name}' has no declared schema for table(s) "
            f"{', '.join(missing)}: an analyst's query is checked against declared public facts "
            f"only. Nothing was charged. Fix: the owner runs `dpx dataset schema {dataset.name}` "
            "to declare it."
        )
    return catalog_of_files(
        [(t.name, t.path) for t in dataset.private_tables],
        [(t.name, t.path) for t in dataset.public_tables],
        uid=dataset.uid,
        row_is_unit=dataset.row_is_unit,
        schemas=schemas,
    )


def catalog_of_frames(
    frames: Mapping[str, pd.DataFrame],
    public: frozenset[str] | set[str] = frozenset(),
    uid: str | None = None,
    row_is_unit: bool = False,
    schemas: Mapping[str, TableSchema] | None = None,
) -> Catalog:
    """The page's catalogue: tables already loaded as frames (an upload, a demo, or a registered
    dataset's files), each converted into its declared schema from `schemas` when the dataset
    declares one, else into one inferred from the frame (owner mode, labelled)."""
    schemas = schemas or {}
    catalog = Catalog()
    for name, frame in frames.items():
        declared = schemas.get(name)
        if name in public:
            catalog.add_public(name, frame, declared)
        elif row_is_unit:
            catalog.add_private_rows(name, frame, declared)
        else:
            catalog.add_private(name, frame, uid, declared)
    return catalog
