"""The privacy unit is followed by column identity (core/dpsql/lineage.py), never by name.

Attacks are tried as an analyst would: on two neighbouring datasets (with and without one
unit that has 40 orders) every refusal must happen before data is read and be identical on
both; accepted renamings must still bound contributions per the real unit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sqlglot import exp

from core.dpsql.catalog import Catalog
from core.dpsql.check.lineage import BaseColumn, Lineage, qualified_copy
from core.dpsql.execute.engine import Engine
from core.dpsql.parse.dialect import parse_statements
from core.dpsql.service import prepare
from core.errors import InputError
from core.privacy import Noise
from tests.dpsql.governed import Charged

OPT = "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1)"
HEAVY = 99  # the unit that only one neighbour contains


def anon(body: str) -> str:
    return f"SELECT WITH ANONYMIZATION {OPT} {body}"


def neighbours() -> tuple[Catalog, Catalog]:
    """30 light units with 2 orders each; the heavy unit adds 40 orders and salary 150."""
    catalogs = []
    for with_heavy in (True, False):
        uids = list(np.repeat(np.arange(30), 2)) + ([HEAVY] * 40 if with_heavy else [])
        orders = pd.DataFrame(
            {
                "uid": np.array(uids, dtype=np.int64),
                "person": [f"p{u}" for u in uids],
                "amount": np.ones(len(uids)),
            }
        )
        users = pd.DataFrame(
            {
                "uid": np.array(sorted(set(uids)), dtype=np.int64),
                "salary": [150.0 if u == HEAVY else 10.0 for u in sorted(set(uids))],
            }
        )
        catalog = Catalog()
        catalog.add_private("Orders", orders, "uid")
        catalog.add_private("Users", users, "uid")
        catalog.add_public("pub", pd.DataFrame({"g": np.arange(100), "dept": ["a", "b"] * 50}))
        catalogs.append(catalog)
    return catalogs[0], catalogs[1]


ATTACKS = {
    "alias column list on a table (the audit's example)": (
        "O.person, ANON_COUNT(*, 1) AS c FROM Orders AS O(person, uid) GROUP BY O.person",
        "DPX-L001",
    ),
    "alias column list on a subquery": (
        "x.person, ANON_COUNT(*, 1) AS c FROM (SELECT uid, person FROM Orders) AS x(person, uid) "
        "GROUP BY x.person",
        "DPX-L001",
    ),
    "CTE column list": (
        "x.person, ANON_COUNT(*, 1) AS c FROM x GROUP BY x.person",
        "DPX-L001",
    ),
    "private-private join on a relabelled column": (
        "ANON_SUM(U.salary, 0, 200) AS s FROM Orders O JOIN Users AS U(uid, other) "
        "ON U.uid = O.uid",
        "DPX-L001",
    ),
    "* REPLACE relabels the unit": (
        "x.uid2, ANON_COUNT(*, 1) AS c FROM (SELECT * REPLACE (person AS uid), uid AS uid2 "
        "FROM Orders) x GROUP BY x.uid2",
        "DPX-L002",
    ),
    "* RENAME relabels the unit": (
        "x.p, ANON_COUNT(*, 1) AS c FROM (SELECT * RENAME (uid AS p, person AS uid) FROM Orders) x "
        "GROUP BY x.p",
        "DPX-L002",
    ),
    "COLUMNS(...) by pattern": (
        "ANON_COUNT(*, 1) AS c FROM (SELECT COLUMNS('.*') FROM Orders) x",
        "DPX-L003",
    ),
    "rowid pseudo-column": (
        "ANON_COUNT(*, 1) AS c FROM Orders WHERE rowid = 70",
        "DPX-L005",
    ),
    "POSITIONAL JOIN": (
        "pub.g, ANON_COUNT(*, 1) AS c FROM Orders POSITIONAL JOIN pub GROUP BY pub.g",
        "DPX-L006",
    ),
    "ASOF JOIN": (
        "ANON_COUNT(*, 1) AS c FROM Orders ASOF JOIN pub ON Orders.amount >= pub.g",
        "DPX-L006",
    ),
    "window function in a private subquery": (
        "ANON_COUNT(*, 1) AS c FROM (SELECT uid, ROW_NUMBER() OVER () AS r FROM Orders) x "
        "WHERE x.r = 70",
        "DPX-L007",
    ),
    "USING SAMPLE": (
        "ANON_COUNT(*, 1) AS c FROM Orders USING SAMPLE 50%",
        "DPX-L008",
    ),
    "computed unit projected as the unit": (
        "ANON_SUM(x.salary, 0, 200) AS s FROM Orders O JOIN "
        "(SELECT uid + 0 AS uid, salary FROM Users) x ON x.uid = O.uid",
        "DPX-V0",
    ),
    "GROUP BY on the unit renamed twice": (
        "y.q, ANON_COUNT(*, 1) AS c FROM (SELECT x.p AS q, x.p FROM "
        "(SELECT uid AS p FROM Orders) x) y GROUP BY y.q",
        "DPX-V028",
    ),
    "aggregating subquery grouped by a copy of another column named uid": (
        "ANON_SUM(x.n, 0, 50) AS s FROM (SELECT person AS uid, COUNT(*) AS n FROM Orders "
        "GROUP BY person) x",
        "DPX-V01",
    ),
}


def _with_cte(name: str, body: str) -> str:
    if name == "CTE column list":
        return f"WITH x(person, uid) AS (SELECT uid, person FROM Orders) {anon(body)}"
    return anon(body)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_relabelling_attacks_are_refused_identically_on_neighbours(name):
    body, code = ATTACKS[name]
    sql = _with_cte(name, body)
    messages = []
    for catalog in neighbours():
        with pytest.raises(InputError) as err:
            prepare(sql, catalog, Noise.seeded(0))
        messages.append(str(err.value))
    assert messages[0].startswith(code), messages[0]
    assert "Fix:" in messages[0]
    assert messages[0] == messages[1]  # the refusal does not depend on the data


def test_the_audit_example_released_the_heavy_unit_before_and_is_refused_now(tmp_path):
    """Before, `Orders AS O(person, uid)` bounded contributions per `person`'s values relabelled
    as uid — the heavy unit's 40 orders formed 40 'units' and its partition was released. Now
    the query never reaches the data."""
    with_heavy, _ = neighbours()
    session = Charged(tmp_path)
    with pytest.raises(InputError, match="DPX-L001"):
        prepared = prepare(
            _with_cte("", ATTACKS[next(iter(ATTACKS))][0]), with_heavy, Noise.seeded(0)
        )
        session.run(prepared, Engine(with_heavy))
    assert session.spent == (0.0, 0.0)


def _lineage(sql: str) -> tuple[Lineage, Catalog]:
    catalog = neighbours()[0]
    select = parse_statements(sql)[0]
    return Lineage(qualified_copy(select, catalog), catalog), catalog


def test_resolve_follows_renames_through_ctes_and_subqueries():
    lineage, _ = _lineage(
        "WITH a AS (SELECT uid AS p, person FROM Orders) "
        + anon("ANON_COUNT(*, 1) AS c FROM (SELECT p AS q, person AS r, p + 0 AS z FROM a) x")
    )
    root = lineage.root
    assert lineage.resolve(root, _col("x", "q")) == BaseColumn("orders", "uid")
    assert lineage.resolve(root, _col("x", "r")) == BaseColumn("orders", "person")
    assert lineage.resolve(root, _col("x", "z")) is None  # computed: not the unit
    assert lineage.is_unit(root, _col("x", "q")) and not lineage.is_unit(root, _col("x", "r"))


def _col(table: str, name: str) -> exp.Column:
    return exp.column(name, table=table)


def test_join_on_unit_columns_by_identity_is_accepted_and_bounds_the_real_unit():
    """A renamed unit (uid AS person_id) is still the unit: the join is accepted and the
    heavy unit's 40 orders count at most once per partition (C_u = 1, bound 1)."""
    sql = anon(
        "ANON_COUNT(*, 1) AS c FROM Orders O JOIN "
        "(SELECT uid AS person_id, salary FROM Users) U ON U.person_id = O.uid"
    )
    exact = {}
    for i, catalog in enumerate(neighbours()):
        prepared = prepare(sql, catalog, Noise.seeded(0))
        stage = prepared.staged.stage_sql("cross_user")
        exact[i] = Engine(catalog).frame(stage)["s0"].iloc[0]
    assert exact[0] - exact[1] == 1  # one unit, contribution bounded by 1


def test_accepted_rename_of_the_unit_does_not_count_a_heavy_unit_many_times():
    sql = anon("ANON_COUNT(*, 1) AS c FROM (SELECT uid AS person_id, amount FROM Orders) x")
    results = []
    for catalog in neighbours():
        prepared = prepare(sql, catalog, Noise.seeded(0))
        results.append(Engine(catalog).frame(prepared.staged.stage_sql("cross_user"))["s0"].iloc[0])
    assert results[0] - results[1] == 1
