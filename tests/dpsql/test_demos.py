"""Every built-in example query releases partitions on the demo it is written for."""

from __future__ import annotations

import pytest

from core.dpsql.catalog import Catalog
from core.dpsql.demos import DEMOS, DEPARTMENT_SIZES, PUBLIC_TABLES, examples_for, group_units
from core.dpsql.execute.engine import Engine
from core.dpsql.service import explain, prepare
from core.privacy import Noise
from tests.dpsql.helpers import release_of

SEEDS = range(5)


@pytest.fixture(scope="module")
def demo_tables():
    return {d.name: d.load() for d in DEMOS}


def _catalog(demo: str, tables) -> Catalog:
    catalog = Catalog()
    for name, frame in tables.items():
        if name in PUBLIC_TABLES[demo]:
            catalog.add_public(name, frame)
        else:
            catalog.add_private(name, frame, "uid")
    return catalog


CASES = [(d.name, title) for d in DEMOS for title in examples_for(d.name)]


@pytest.mark.parametrize(("demo", "title"), CASES)
def test_example_releases_every_group_above_its_threshold(demo, title, demo_tables):
    tables = demo_tables[demo]
    catalog = _catalog(demo, tables)
    sql = examples_for(demo)[title]
    threshold = explain(prepare(sql, catalog, Noise.seeded(0)), "duckdb")["threshold"]["integer"]
    units = group_units(demo, tables)
    clear = set(units[units >= 2 * threshold].index)  # far above T: released in practice
    assert clear, f"{title}: no group of {demo} is even twice T = {threshold}"
    engine = Engine(catalog)
    for seed in SEEDS:
        noise = Noise.seeded(seed)
        result = release_of(prepare(sql, catalog, noise), engine, noise).to_dict()
        released = {row[0] for row in result["rows"]}
        assert result["partitions_released"] > 0
        assert clear <= released, f"{title}, seed {seed}: released only {released}"


def test_employee_demo_group_sizes_are_the_generator_sizes(demo_tables):
    units = group_units("sql-employee-orders", demo_tables["sql-employee-orders"])
    assert units.to_dict() == DEPARTMENT_SIZES


def test_thesis_example_suppresses_the_small_department(demo_tables):
    """IT (3 employees) is far below T for every example of the Employee/Orders demo."""
    tables = demo_tables["sql-employee-orders"]
    catalog = _catalog("sql-employee-orders", tables)
    for sql in examples_for("sql-employee-orders").values():
        t = explain(prepare(sql, catalog, Noise.seeded(0)), "duckdb")["threshold"]["integer"]
        assert DEPARTMENT_SIZES["IT"] * 4 < t
