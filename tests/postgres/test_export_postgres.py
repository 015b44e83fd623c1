"""The PostgreSQL export (`dpx sql --dry-run --dialect postgres`, `staged.sql("postgres")`) runs
on a real PostgreSQL server for the whole engine corpus (tests/engine_corpus.py), and computes
what DuckDB computes.

The export samples with RANDOM() (dpx never runs it; it is for an owner's own server), so its
cross-user table can equal DuckDB's only where sampling keeps everything: with C_u = 20 and
k = 20 no unit in the corpus has more partitions or rows than that, and the tables must be
equal exactly. With C_u = 1 sampling is active and the export must still keep exactly one
partition per unit."""

from __future__ import annotations

import json

import duckdb
import pytest

from core.cli import main
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.privacy import Noise
from tests.engine_corpus import CORPUS, canonical, query, tables
from tests.engine_corpus import catalog as corpus_catalog


@pytest.fixture(scope="module")
def catalog():
    return corpus_catalog()


@pytest.fixture(scope="module")
def server(postgres):
    private, public = tables()
    for name, frame in {**private, **public}.items():
        postgres.load(name, frame, [str(t) for t in duckdb.from_df(frame).types])
    return postgres


@pytest.fixture(scope="module")
def duck(catalog):
    engine = Engine(catalog)
    yield engine
    engine.close()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_postgres_export_equals_duckdb_without_sampling(server, duck, catalog, name):
    plan = prepare(query(name, cu=20, k=20), catalog, Noise.seeded(5)).staged
    expected = duck.frame(plan.sql("duckdb", executable=True, pretty=False))
    got = server.frame(plan.sql("postgres"))
    assert list(got.columns) == list(expected.columns)
    assert len(expected) > 0
    assert canonical(got) == canonical(expected)


def test_postgres_export_samples_at_most_c_u_partitions(server, duck, catalog):
    """C_u = 1: every unit with an order keeps exactly one category (RANDOM() chooses which)."""
    plan = prepare(query("sum_avg_clamped", cu=1), catalog, Noise.seeded(5)).staged
    got = server.frame(plan.sql("postgres"))
    full = duck.frame(
        prepare(query("sum_avg_clamped", cu=20), catalog, Noise.seeded(5)).staged.sql(
            "duckdb", executable=True, pretty=False
        )
    )
    assert sum(int(n) for n in got["n_units"]) == 400
    most = dict(zip(full["k0"], full["n_units"], strict=True))
    assert all(int(n) <= most[k] for k, n in zip(got["k0"], got["n_units"], strict=True))


def test_quantile_export_is_valid_postgresql(server, capsys, tmp_path):
    """The known-invalid case (issue 11): FLATTEN(ARRAY_AGG(list)) is not PostgreSQL. The CLI's
    --dry-run --dialect postgres text for a quantile query now runs and gathers every kept
    value: one per non-NULL amount in [0, 100] after clamping."""
    private, _ = tables()
    path = tmp_path / "orders.csv"
    private["orders"].to_csv(path, index=False)
    code = main(
        ["sql", "--table", f"orders={path}", "--uid", "uid", "--dry-run", "--dialect",
         "postgres", "--json", "--query", query("var_stddev_quantiles", cu=20, k=20)]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    sql = json.loads(captured.out)["rewritten_sql"]
    assert "FLATTEN" not in sql.upper()
    got = server.frame(sql)
    values = sum((list(v) for v in got["l2"]), [])
    amounts = private["orders"]["amount"].dropna()
    assert len(values) == len(amounts)
    assert sorted(values) == sorted(amounts.clip(0, 100).tolist())


def test_exported_round_matches_duckdb_at_halves(server):
    """PostgreSQL's ROUND(double) rounds halves to even; the export must round like DuckDB
    (away from zero), also next to a half and beyond 2^52."""
    from sqlglot import exp

    from core.dpsql.sql.postgres import round_half_away

    values = [0.5, 1.5, 2.5, -0.5, -2.5, 0.49999999999999994, -0.49999999999999994, 3.0,
              2.0**52 + 1, -(2.0**53), 1e300, 0.0]  # fmt: skip
    listed = ", ".join(f"({v!r}::DOUBLE PRECISION)" for v in values)
    tree = exp.select(exp.alias_(exp.Round(this=exp.column("x")), "r")).from_("t")
    sql = round_half_away(tree).sql(dialect="postgres")
    got = server.frame(f"WITH t(x) AS (VALUES {listed}) {sql}")["r"].tolist()
    expected = [duckdb.sql(f"SELECT ROUND({v!r}::DOUBLE)").fetchall()[0][0] for v in values]
    assert [float(g) for g in got] == expected
