"""core.dpsql.parquet_schema: the footer-only stand-in has exactly the dtypes (and hence the
catalogue schema and the Spark schema) of the full `load_table`, including the cases where
pandas' type depends on the data (a NULL in an integer or boolean column)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.data.loading import load_table
from core.dpsql.catalog import Catalog
from core.dpsql.check.lineage import catalog_schema
from core.dpsql.parquet_schema import add_for_spark, stand_in
from tests.engine_corpus import tables


def frames() -> dict[str, pd.DataFrame]:
    private, public = tables()
    n = 50
    edge = pd.DataFrame(
        {
            "i_null": pd.array([1, None] * (n // 2), dtype="Int64"),
            "i": np.arange(n),
            "b_null": [True, None] * (n // 2),
            "b": [True, False] * (n // 2),
            "f_all_nan": [np.nan] * n,
            "s_all_null": [None] * n,
            "cat": pd.Categorical(["x", "y"] * (n // 2)),
            "ts": pd.date_range("2024-01-01", periods=n, freq="h"),
            "text": [f"t{i}" for i in range(n)],
        }
    )
    return {**private, **public, "edge": edge}


@pytest.mark.parametrize("name", sorted(frames()))
def test_stand_in_types_equal_the_full_load(tmp_path, name):
    frame = frames()[name]
    path = tmp_path / f"{name}.parquet"
    frame.to_parquet(path, row_group_size=7)  # several row groups: statistics are combined
    full, light = load_table(path), stand_in(path)
    assert light is not None and len(light) <= 2
    assert list(light.columns) == list(full.columns)
    a, b = Catalog(), Catalog()
    a.add_public(name, full)
    b.add_public(name, light)
    # as registered (categoricals become plain values: their category list is data)
    assert list(b.get(name).frame.dtypes) == list(a.get(name).frame.dtypes)
    assert catalog_schema(a) == catalog_schema(b)
    assert _spark_schema(a.get(name).frame) == _spark_schema(b.get(name).frame)


def _spark_schema(frame: pd.DataFrame) -> str:
    from core.dpsql.execute.spark_engine import spark_schema  # (PySpark itself is not imported)
    from core.errors import InputError

    try:
        return spark_schema(frame)
    except InputError as err:  # e.g. an all-NULL column: refused alike
        return str(err)


def test_csv_and_unreadable_footers_are_loaded(tmp_path):
    csv = tmp_path / "t.csv"
    pd.DataFrame({"uid": [1, 2], "x": [3, 4]}).to_csv(csv, index=False)
    catalog = Catalog()
    spec = add_for_spark(catalog, "t", csv, "uid", private=True)
    assert len(spec.frame) == 2  # loaded as usual
    fake = tmp_path / "f.parquet"
    fake.write_bytes(b"not parquet")
    assert stand_in(fake) is None
