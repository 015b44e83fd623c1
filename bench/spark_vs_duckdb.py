"""DuckDB vs Spark (local mode) on the same DP SQL query and the same data (issue 11).

Data: `core.dpsql.demos.synthetic_shop` (seeded), scaled to about --rows purchase rows. For each
engine: the plain GROUP BY (region, COUNT, SUM), the executed staged DP SQL (cross-user stage),
and the ratio of the two; plus the whole `service.run` (SQL + noise + post-processing). Spark
times exclude the session start (reported separately) and include reading the Parquet views.

    .venv/bin/python bench/spark_vs_duckdb.py --rows 1000000 [--master local[2]]

Prints one JSON object; results are recorded in docs/benchmarks/spark.md.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from core.dpsql.catalog import Catalog
from core.dpsql.demos import synthetic_shop
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare, run
from core.privacy import Accountant, Noise


def release_of(prepared, engine, noise: Noise):
    """Run a prepared query with an accountant holding exactly its cost (a benchmark charges
    no registry)."""
    return run(prepared, engine, Accountant(noise, budget=prepared.cost))


QUERY = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-6, max_groups_contributed = 3) "
    "u.region, ANON_COUNT(*, 10) AS n, ANON_SUM(p.amount, 0, 200) AS s "
    "FROM purchases p JOIN users u ON p.uid = u.uid GROUP BY u.region"
)
PLAIN = (
    "SELECT u.region, COUNT(*) AS n, SUM(p.amount) AS s "
    "FROM purchases p JOIN users u ON p.uid = u.uid GROUP BY u.region"
)


def timed(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    # ~10 purchase rows per unit (1% heavy users hold 20x), 50 regions: --rows 10000000 is
    # the reference shape (10M rows, 1M units)
    tables = synthetic_shop(n_users=max(1000, args.rows // 10), mean_rows=8.4)
    catalog = Catalog()
    catalog.add_private("users", tables["users"], "uid")
    catalog.add_private("purchases", tables["purchases"], "uid")
    noise = Noise.seeded(1)
    prepared = prepare(QUERY, catalog, noise)
    staged = prepared.staged.sql("duckdb", executable=True, pretty=False)
    out = {
        "rows": int(len(tables["purchases"])),
        "units": int(len(tables["users"])),
        "cpus": os.cpu_count(),
        "load_average_1m_before": os.getloadavg()[0],
        "query": QUERY,
    }

    duck = Engine(catalog)
    out["duckdb"] = {
        "plain_group_by_s": timed(lambda: duck.frame(PLAIN), args.repeats),
        "dp_stages_s": timed(lambda: duck.frame(staged), args.repeats),
        "dp_query_s": timed(
            lambda: release_of(prepare(QUERY, catalog, Noise.seeded(1)), duck, noise),
            args.repeats,
        ),
    }

    from core.dpsql.execute.spark_engine import SparkEngine
    from core.sparkutil import spark_session

    start = time.perf_counter()
    session = spark_session(args.master, app_name="dpx-bench")
    session_s = time.perf_counter() - start
    start = time.perf_counter()
    sparky = SparkEngine(catalog, session=session)
    views_s = time.perf_counter() - start
    out["spark"] = {
        "master": args.master,
        "session_start_s": session_s,
        "register_views_s": views_s,
        "plain_group_by_s": timed(lambda: sparky.spark.sql(PLAIN).collect(), args.repeats),
        "dp_stages_s": timed(lambda: sparky.frame(staged), args.repeats),
        "dp_query_s": timed(
            lambda: release_of(prepare(QUERY, catalog, Noise.seeded(1)), sparky, noise),
            args.repeats,
        ),
    }
    for engine in ("duckdb", "spark"):
        r = out[engine]
        r["dp_stages_over_plain"] = r["dp_stages_s"] / r["plain_group_by_s"]
        r["dp_query_over_plain"] = r["dp_query_s"] / r["plain_group_by_s"]
    out["same_cross_user_stage"] = sorted(
        map(repr, duck.frame(staged).itertuples(index=False))
    ) == sorted(map(repr, sparky.frame(staged).itertuples(index=False)))
    sparky.close()
    import pyspark

    out["pyspark"] = pyspark.__version__
    out["load_average_1m_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
