"""`example_query(catalog)`: a first query that runs on any catalogue's schema (issue 19 item 5's
core part: the page shows it for uploads and registered datasets)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.dpsql.catalog import Catalog
from core.dpsql.demos import DEMOS, PUBLIC_TABLES
from core.dpsql.execute.engine import Engine
from core.dpsql.service import example_query, prepare
from core.errors import InputError
from core.privacy import Noise
from tests.dpsql.helpers import release_of
from tests.dpsql.oracle.neighbours import Victim, neighbours


def _demo(name: str) -> Catalog:
    catalog = Catalog()
    for table, frame in next(d for d in DEMOS if d.name == name).load().items():
        if table in PUBLIC_TABLES[name]:
            catalog.add_public(table, frame)
        else:
            catalog.add_private(table, frame, "uid")
    return catalog


def _upload() -> Catalog:
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {
            "Home Town": rng.choice(["Ely", "Bath"], 400),
            "pay": rng.uniform(0, 10, 400),
            "visit day": pd.to_datetime("2024-01-01")
            + pd.to_timedelta(rng.integers(0, 9, 400), "D"),
        }
    )
    catalog = Catalog()
    catalog.add_private_rows("incidents", frame)
    return catalog


def _numbers_only() -> Catalog:
    catalog = Catalog()
    catalog.add_private("t", pd.DataFrame({"id": np.arange(50), "v": np.arange(50.0)}), "id")
    return catalog


CATALOGS = {
    "employee/orders demo": lambda: _demo("sql-employee-orders"),
    "synthetic shop demo": lambda: _demo("sql-synthetic-shop"),
    "oracle neighbours": lambda: neighbours(Victim.HEAVY).with_victim,
    "upload, row is unit, odd names": _upload,
    "numbers only (no key)": _numbers_only,
}


@pytest.mark.parametrize("name", list(CATALOGS))
def test_the_example_runs_on_the_catalogue(name):
    catalog = CATALOGS[name]()
    sql = example_query(catalog)
    noise = Noise.seeded(0)
    result = release_of(prepare(sql, catalog, noise), Engine(catalog), noise)
    assert "units" in result.columns and "row_count" in result.columns


def test_the_example_is_written_from_the_schema_only():
    """Two catalogues with the same schema and different values get the same example."""
    a, b = _upload(), _upload()
    frame = b.get("incidents").frame.copy()
    frame["Home Town"] = "Zz"
    c = Catalog()
    c.add_private("incidents", frame, "row_id")
    assert example_query(a) == example_query(c)
    assert 'GROUP BY "Home Town"' in example_query(a)


def test_no_private_table_is_a_clear_refusal():
    catalog = Catalog()
    catalog.add_public("p", pd.DataFrame({"x": [1]}))
    with pytest.raises(InputError, match="DPX-C010"):
        example_query(catalog)
