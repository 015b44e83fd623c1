"""Shared DP SQL fixtures: the ZetaSQL compliance tables (spec §5) and a query runner."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.privacy import Noise
from tests.dpsql.helpers import release_of

NULL = None


def _table(rows: list[tuple]) -> pd.DataFrame:
    uid, ints, dbls = zip(*rows, strict=True)
    return pd.DataFrame(
        {
            "uid": np.array(uid, dtype=np.int64),
            "int64_val": pd.array(ints, dtype="Int64"),
            "double_val": pd.array([np.nan if d is None else d for d in dbls], dtype="float64"),
        }
    )


@pytest.fixture
def t1() -> pd.DataFrame:
    ints = [NULL, 2, 1, NULL, 1, 2, 1, 4, 2, 3]
    dbls = [NULL, 1.5, 1.5, 2.5, 3.5, NULL, -0.5, -1.5, 1.5, 2.5]
    return _table(list(zip(range(1, 11), ints, dbls, strict=True)))


@pytest.fixture
def t2() -> pd.DataFrame:
    return _table(
        [(1, NULL, NULL), (2, 2, 1.5), (3, 1, 1.5), (1, NULL, 2.5), (2, 1, 3.5),
         (2, 2, NULL), (1, 1, -0.5), (2, 4, -1.5), (3, 2, 1.5), (2, 3, 2.5)]
    )  # fmt: skip


@pytest.fixture
def t4() -> pd.DataFrame:
    return _table([(u, NULL, NULL) for u in (1, 2, 1, 1, 1, 2, 1)])


@pytest.fixture
def run_sql():
    """run_sql(sql, tables={name: df}, public={name: df}, seed=0, session=None) -> QueryResult;
    with `session` (tests.dpsql.governed.Charged) the run is governed and charged."""

    def runner(sql, tables, public=None, seed=0, session=None, defaults=None):
        catalog = Catalog()
        for name, df in tables.items():
            catalog.add_private(name, df, "uid")
        for name, df in (public or {}).items():
            catalog.add_public(name, df)
        noise = Noise.seeded(seed)
        prepared = prepare(sql, catalog, noise, defaults)
        if session is None:
            return release_of(prepared, Engine(catalog), noise)
        return session.run(prepared, Engine(catalog))  # governed: charged to its dataset

    return runner


@pytest.fixture
def catalog_of():
    def make(tables, public=None):
        catalog = Catalog()
        for name, df in tables.items():
            catalog.add_private(name, df, "uid")
        for name, df in (public or {}).items():
            catalog.add_public(name, df)
        return catalog

    return make


@pytest.fixture
def shop_tables():
    """A tiny employee/orders/public-departments catalogue for validator tests."""
    emp = pd.DataFrame({"uid": [1, 2, 3], "dept": ["HR", "HR", "IT"], "age": [30, 40, 50]})
    orders = pd.DataFrame(
        {"uid": [1, 1, 2, 3], "amount": [10.0, 20.0, 30.0, 5.0], "day": [1, 2, 3, 4]}
    )
    depts = pd.DataFrame({"dept": ["HR", "IT"], "floor": [1, 2]})
    return {"Employee": emp, "Orders": orders}, {"Depts": depts}
