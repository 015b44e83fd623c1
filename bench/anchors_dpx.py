"""Anchor child: `dpx sql`'s engine (DuckDB) on shop.csv; prints JSON. Run by anchors_run.py."""

from __future__ import annotations

import json
import resource
import sys
import time

import pandas as pd

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare, run
from core.privacy import Accountant, Noise


def release_of(prepared, engine, noise: Noise):
    """Run a prepared query with an accountant holding exactly its cost (a benchmark charges
    no registry)."""
    return run(prepared, engine, Accountant(noise, budget=prepared.cost))


QUERY = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-6, max_groups_contributed = 1) "
    "region, ANON_COUNT(*, 5) AS c, ANON_SUM(amount, 0, 500) AS s FROM shop GROUP BY region"
)


def main() -> None:
    t0 = time.perf_counter()
    shop = pd.read_csv(sys.argv[1])
    catalog = Catalog()
    catalog.add_private("shop", shop, "uid")
    engine = Engine(catalog, timeout_s=1800)
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    noise = Noise.seeded(11)
    result = release_of(prepare(QUERY, catalog, noise), engine, noise)
    query = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "tool": "dpx (DuckDB)",
                "load_s": round(load, 2),
                "query_s": round(query, 2),
                "rows_released": int(len(result.table)),
                "peak_rss_self_mb": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
                ),
            }
        )
    )


if __name__ == "__main__":
    main()
