"""Issue 19 item 1: the work a query does is bounded by public facts before any data is read.

Before this change the issue's query was accepted: with user 7 present it ran into the time
limit (DPX-E003), without user 7 it released — a deterministic, unbounded leak. Every hostile
entry of tests/dpsql/corpus/amplification.sql is now refused with DPX-V040 before a private row
is read; the accepted ones release, and their bound is an upper bound on the real fan-out."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from core.dpsql.catalog import Catalog
from core.dpsql.check.amplification import JOIN_ROWS_PER_UNIT, MAX_AMPLIFICATION
from core.dpsql.check.passes import Checking, amplification, run_checks
from core.dpsql.execute.engine import Engine
from core.dpsql.parse.dialect import parse_statements
from core.dpsql.service import prepare
from core.errors import InputError
from core.privacy import Noise
from tests.dpsql.helpers import release_of
from tests.dpsql.oracle.corpus import DP, load
from tests.dpsql.oracle.neighbours import Victim, neighbours

ISSUE_QUERY = (
    "SELECT WITH ANONYMIZATION OPTIONS(epsilon=1, delta=1e-5, max_groups_contributed=1) "
    "ANON_COUNT(*, 5) AS c FROM Users U JOIN Seq A ON U.uid = 7 JOIN Seq B ON TRUE "
    "JOIN Seq C ON TRUE JOIN Seq E ON TRUE"
)
ENTRIES = [e for e in load() if e.klass == "amplification"]


def _bound(sql: str, catalog: Catalog) -> int:
    state = run_checks(Checking(sql, catalog, {}, parse_statements(sql)), upto=amplification)
    return state.amplification.bound


class NoReads(Engine):
    """An engine that fails the test if anything is bound or read."""

    def bind(self, sql):  # pragma: no cover - reaching it is the failure
        raise AssertionError("the query reached the engine")

    def fetch(self, sql):  # pragma: no cover
        raise AssertionError("the query read data")


@pytest.mark.parametrize("victim", list(Victim))
def test_the_issue_query_is_refused_before_any_data_is_read(victim):
    for catalog in (neighbours(victim).with_victim, neighbours(victim).without_victim):
        with pytest.raises(InputError) as err:
            prepare(ISSUE_QUERY, catalog, Noise.seeded(0))
        text = str(err.value)
        assert text.startswith("DPX-V040") and "Fix:" in text
        assert f"{MAX_AMPLIFICATION:,}" in text


def test_a_binary_search_on_a_private_value_is_refused_identically_for_every_threshold():
    catalog = neighbours(Victim.HEAVY).with_victim
    messages = set()
    for k in (0, 50, 100, 149, 150, 151, 1e9):
        sql = ISSUE_QUERY.replace("ON U.uid = 7", f"ON U.uid = 7 AND U.salary >= {k}")
        with pytest.raises(InputError) as err:
            prepare(sql, catalog, Noise.seeded(0))
        messages.add(str(err.value).split(" at `")[0])
    assert len(messages) == 1 and next(iter(messages)).startswith("DPX-V040")


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_corpus_class_is_refused_or_runs_as_labelled(entry):
    catalog = neighbours(Victim.HEAVY).with_victim
    if entry.id.endswith("_runs"):
        noise = Noise.seeded(0)
        result = release_of(prepare(entry.sql, catalog, noise), Engine(catalog), noise)
        assert result.columns
        return
    with pytest.raises(InputError) as err:
        prepared = prepare(entry.sql, catalog, Noise.seeded(0))
        release_of(prepared, NoReads(catalog), Noise.seeded(0))
    assert str(err.value).startswith("DPX-V040"), str(err.value)


def test_the_bound_depends_on_public_facts_only():
    """Same bound on D and D' for every victim: private rows never enter it."""
    sqls = [
        f"{DP} ANON_COUNT(*, 5) AS c FROM Users U JOIN Pub A ON U.code = A.label",
        f"{DP} ANON_COUNT(*, 5) AS c FROM Users U JOIN Orders O USING (uid) JOIN Depts D ON TRUE",
        f"{DP} ANON_COUNT(*, 5) AS c FROM Seq A JOIN Depts D ON TRUE JOIN Users U ON U.dept = D.dept",
    ]
    for sql in sqls:
        bounds = {
            _bound(sql, catalog)
            for victim in Victim
            for catalog in (neighbours(victim).with_victim, neighbours(victim).without_victim)
        }
        assert len(bounds) == 1, (sql, bounds)


def test_key_multiplicities_give_the_bound():
    catalog = neighbours(Victim.HEAVY).with_victim
    labels = catalog.get("Pub").frame["label"].value_counts().max()  # 100 rows, 7 labels
    assert labels == 15
    assert (
        _bound(f"{DP} ANON_COUNT(*, 5) AS c FROM Users U JOIN Pub A ON U.code = A.label", catalog)
        == 15
    )
    assert (
        _bound(f"{DP} ANON_COUNT(*, 5) AS c FROM Users U JOIN Pub A ON U.age = A.g", catalog) == 1
    )
    assert (
        _bound(f"{DP} ANON_COUNT(*, 5) AS c FROM Users U JOIN Pub A ON U.age < A.g", catalog) == 100
    )
    two = f"{DP} ANON_COUNT(*, 5) AS c FROM Users U JOIN Orders O USING (uid)"
    assert _bound(two, catalog) == JOIN_ROWS_PER_UNIT


SOUND = {
    "key join": "FROM Users U JOIN Pub A ON U.code = A.label",
    "range join": "FROM Users U JOIN Seq A ON A.i < U.age",
    "public chain": "FROM Seq A JOIN Depts D ON A.i = D.floor JOIN Users U ON U.dept = D.dept",
    "public product by key": "FROM Depts D JOIN Pub P ON TRUE JOIN Users U ON U.dept = D.dept",
    "null-safe key": "FROM Users U JOIN Depts D ON U.dept IS NOT DISTINCT FROM D.dept",
}


@pytest.mark.parametrize("name", list(SOUND))
def test_the_bound_is_an_upper_bound_on_the_real_fan_out(name):
    """For a one-row-per-unit private table, the largest number of joined rows any Users row
    produces (measured on the data) never exceeds the public bound."""
    for victim in Victim:
        catalog = neighbours(victim).with_victim
        bound = _bound(f"{DP} ANON_COUNT(*, 5) AS c {SOUND[name]}", catalog)
        con = duckdb.connect()
        for spec in catalog.tables():
            con.register(spec.name, spec.frame)
        rows = con.execute(f"SELECT U.uid, COUNT(*) {SOUND[name]} GROUP BY U.uid").fetchall()
        actual = max((n for _, n in rows), default=0)
        assert actual <= bound <= MAX_AMPLIFICATION, (name, victim, actual, bound)


def test_private_joins_keep_at_most_the_cap_of_rows_per_unit():
    """A unit with 150 orders: joined to another private table, it keeps 100 of them (the
    cap is enforced in the executed SQL, on DuckDB and in the Spark text alike); read alone,
    all 150 count."""
    heavy = pd.DataFrame({"uid": [1] * 150 + list(range(2, 40)), "amount": np.ones(188)})
    users = pd.DataFrame({"uid": range(1, 40), "dept": ["a"] * 39})
    catalog = Catalog()
    catalog.add_private("Users", users, "uid")
    catalog.add_private("Orders", heavy, "uid")
    engine = Engine(catalog)
    joined = prepare(
        f"{DP} ANON_COUNT(*, 1000) AS c FROM Users JOIN Orders USING (uid)",
        catalog,
        Noise.seeded(1),
    )
    alone = prepare(f"{DP} ANON_COUNT(*, 1000) AS c FROM Orders", catalog, Noise.seeded(1))

    def rows_of_unit_1(prepared):
        src = engine.frame(prepared.staged.stage_sql("per_user"))
        return int(src.loc[src["_uid"] == 1, "p0"].iloc[0])

    assert rows_of_unit_1(joined) == JOIN_ROWS_PER_UNIT
    assert rows_of_unit_1(alone) == 150
    assert "__dpx_rank <= 100" in joined.staged.sql("spark", pretty=False).replace("`", "")
