"""Anchor child: SmartNoise SQL (snsql, pandas reader) on shop.csv; prints JSON.

Runs in bench/anchors/venv-smartnoise (bench/anchors/setup.sh). max_ids = 5: SmartNoise
reservoir-samples at most 5 rows per unit, then clamps each row's amount to [0, 100]; its own
tau threshold drops rare regions."""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from importlib.metadata import version

import pandas as pd
import snsql

META = """Collection:
  shop:
    shop:
      rows: {rows}
      max_ids: 5
      row_privacy: False
      uid:
        type: int
        private_id: True
      region:
        type: string
      amount:
        type: float
        lower: 0
        upper: 100
"""
QUERY = "SELECT region, COUNT(*) AS c, SUM(amount) AS s FROM shop.shop GROUP BY region"


def main() -> None:
    t0 = time.perf_counter()
    shop = pd.read_csv(sys.argv[1])
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(META.format(rows=len(shop)))
    reader = snsql.from_df(shop, privacy=snsql.Privacy(epsilon=1.0, delta=1e-6), metadata=f.name)
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = reader.execute(QUERY)
    query = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "tool": f"SmartNoise SQL {version('smartnoise-sql')}",
                "load_s": round(load, 2),
                "query_s": round(query, 2),
                "rows_released": len(rows) - 1,  # first row is the header
                "peak_rss_self_mb": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
                ),
            }
        )
    )


if __name__ == "__main__":
    main()
