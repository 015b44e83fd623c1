"""The corpus of accepted DP SQL queries that every engine must run alike (issue 11): the Spark
engine (tests/spark) and the PostgreSQL export (tests/postgres) are checked against DuckDB on it.

It covers joins, public tables (join and PUBLIC_GROUPS), C_u sampling (units with more
partitions than C_u), clamping, every aggregate kind (COUNT rows/values/units, SUM, AVG, VAR,
STDDEV, quantiles), NULL keys and values, and a query without keys."""

from __future__ import annotations

import datetime
import math
from decimal import Decimal

import numpy as np
import pandas as pd

from core.dpsql.catalog import Catalog


def tables() -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """400 people in 6 departments (one NULL); 1-12 orders each over 8 categories, so most
    units touch more categories than C_u; NULL and out-of-bounds amounts; dates."""
    rng = np.random.default_rng(11)
    n = 400
    dept = rng.choice(["HR", "Sales", "IT", "Legal", "Ops"], size=n).astype(object)
    dept[rng.random(n) < 0.05] = None
    people = pd.DataFrame(
        {"uid": np.arange(1, n + 1), "dept": dept, "age": rng.integers(18, 70, n)}
    )
    per = rng.integers(1, 13, size=n)
    uid = np.repeat(people["uid"].to_numpy(), per)
    m = uid.size
    amount = np.round(rng.normal(40, 30, m), 2)  # some below 0, some above the bounds
    amount[rng.random(m) < 0.08] = np.nan
    orders = pd.DataFrame(
        {
            "uid": uid,
            "category": rng.choice([f"c{i}" for i in range(8)], size=m),
            "amount": amount,
            "qty": rng.integers(0, 9, m),
            "day": pd.to_datetime("2024-01-01") + pd.to_timedelta(rng.integers(0, 3, m), unit="D"),
        }
    )
    orders["day"] = orders["day"].dt.date
    cats = pd.DataFrame(
        {"category": [f"c{i}" for i in range(10)], "aisle": [i % 3 for i in range(10)]}
    )
    return {"people": people, "orders": orders}, {"cats": cats}


def catalog() -> Catalog:
    private, public = tables()
    cat = Catalog()
    for name, frame in private.items():
        cat.add_private(name, frame, "uid")
    for name, frame in public.items():
        cat.add_public(name, frame)
    return cat


OPT = "epsilon = {eps}, delta = 1e-5, max_groups_contributed = {cu}, max_rows_per_group = {k}"
CORPUS = {
    "count_join": "SELECT WITH ANONYMIZATION OPTIONS ({opt}) dept, ANON_COUNT(*, 5) AS c "
    "FROM people P JOIN orders O USING (uid) GROUP BY dept",
    "sum_avg_clamped": "SELECT WITH ANONYMIZATION OPTIONS ({opt}) category, "
    "ANON_SUM(amount, 0, 50) AS s, ANON_AVG(amount, 10, 60) AS a, ANON_COUNT(amount, 4) AS nv "
    "FROM orders GROUP BY category",
    "var_stddev_quantiles": "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS ({opt}, "
    "privacy_unit_column = uid) category, "
    "VAR_POP(amount, contribution_bounds_per_row => (0, 100)) AS v, "
    "STDDEV_POP(amount, contribution_bounds_per_row => (0, 100)) AS sd, "
    "PERCENTILE_CONT(amount, 0.5, contribution_bounds_per_row => (0, 100)) AS med "
    "FROM orders GROUP BY category",
    "distinct_units_null_key": "SELECT WITH ANONYMIZATION OPTIONS ({opt}) dept, "
    "COUNT(DISTINCT uid) AS n FROM people GROUP BY dept",
    "public_join_two_keys": "SELECT WITH ANONYMIZATION OPTIONS ({opt}) C.aisle, O.day, "
    "ANON_SUM(O.qty, 0, 20) AS q FROM orders O JOIN cats C ON O.category = C.category "
    "WHERE O.qty > 0 GROUP BY C.aisle, O.day",
    "public_groups": "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = {eps}, "
    "max_groups_contributed = {cu}, max_rows_per_group = {k}, "
    "group_selection_strategy = PUBLIC_GROUPS) C.category, "
    "COUNT(*, contribution_bounds_per_group => (0, 3)) AS c "
    "FROM orders O JOIN cats C ON O.category = C.category GROUP BY C.category",
    "no_keys_quantile": "SELECT WITH ANONYMIZATION OPTIONS ({opt}) "
    "ANON_PERCENTILE_CONT(amount, 0.9, 0, 80) AS p90, ANON_COUNT(*, 3) AS c FROM orders",
}


def query(name: str, eps: float = 1.0, cu: int = 2, k: int = 5) -> str:
    """Corpus query `name`; C_u = 20 and k = 20 keep every (unit, partition) and row."""
    return CORPUS[name].format(opt=OPT.format(eps=eps, cu=cu, k=k), eps=eps, cu=cu, k=k)


def canonical(frame: pd.DataFrame) -> list[tuple]:
    """Rows as comparable tuples, whatever engine produced them: list cells as sorted multisets
    (plus their NULL count), NULL/NaN as None, integral DECIMALs as int, dates as ISO text,
    rows sorted."""

    def cell(v):
        if isinstance(v, (list, np.ndarray)):
            return tuple(sorted((x for x in v if x is not None), key=float)) + (
                ("NULLS", sum(x is None for x in v)),
            )
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        if isinstance(v, Decimal) and v == v.to_integral_value():
            return int(v)
        if isinstance(v, datetime.date):
            return v.isoformat()
        return v

    rows = [tuple(cell(v) for v in row) for row in frame.itertuples(index=False)]
    return sorted(rows, key=repr)
