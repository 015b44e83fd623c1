"""Anchor child: Tumult Analytics on Spark local[2] on shop.csv; prints JSON.

Runs in bench/anchors/venv-tumult (bench/anchors/setup.sh). Units are uid rows
(AddRowsWithID); MaxGroupsPerID(region, 1) and MaxRowsPerGroupPerID(region, 5) truncate, the
amount is clamped to [0, 100]. Tumult evaluates one aggregate per query, so COUNT and SUM are two
queries of epsilon 0.5 each (pure DP, Laplace/geometric); its group keys come from a public
KeySet (R00..R49), so it does no partition selection."""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from importlib.metadata import version

from pyspark.sql import SparkSession
from tmlt.analytics import (
    AddRowsWithID,
    KeySet,
    MaxGroupsPerID,
    MaxRowsPerGroupPerID,
    PureDPBudget,
    QueryBuilder,
    Session,
)


def main() -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers need tmlt too (not the PATH python)
    t0 = time.perf_counter()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    shop = spark.read.csv(sys.argv[1], header=True, schema="uid LONG, region STRING, amount DOUBLE")
    session = Session.from_dataframe(
        privacy_budget=PureDPBudget(1.0),
        source_id="shop",
        dataframe=shop,
        protected_change=AddRowsWithID(id_column="uid"),
    )
    keys = KeySet.from_dict({"region": [f"R{r:02d}" for r in range(50)]})
    load = time.perf_counter() - t0
    t0 = time.perf_counter()

    def bounded() -> QueryBuilder:
        return (
            QueryBuilder("shop")
            .enforce(MaxGroupsPerID("region", 1))
            .enforce(MaxRowsPerGroupPerID("region", 5))
        )

    count = session.evaluate(bounded().groupby(keys).count(name="c"), PureDPBudget(0.5))
    total = session.evaluate(
        bounded().groupby(keys).sum("amount", 0, 100, name="s"), PureDPBudget(0.5)
    )
    rows = count.join(total, "region").toPandas()
    query = time.perf_counter() - t0
    spark.stop()
    print(
        json.dumps(
            {
                "tool": f"Tumult Analytics {version('tmlt.analytics')} (Spark local[2])",
                "spark_startup_s": round(startup, 2),
                "load_s": round(load, 2),
                "query_s": round(query, 2),
                "rows_released": int(len(rows)),
                "peak_rss_self_mb": round(
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
                ),
                "java_home": os.environ.get("JAVA_HOME", "(PATH)"),
            }
        )
    )


if __name__ == "__main__":
    main()
