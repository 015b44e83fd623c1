"""Every call the DP SQL page makes into `core.dpsql`'s service and engines, in one place (the
DP SQL stages are being restructured: issue 19; the lead rewires `run_query` to
`core.governance.govern` with `service.prepare/run(prepared, engine, accountant)`).

Engines are cached resources shared by the sessions of this server (bounded: `max_entries`);
each one runs under the page's resource limits (a watchdog stops runaway queries).
"""

from __future__ import annotations

import streamlit as st

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.execute.pool import POOL
from core.dpsql.limits import ResourceLimits
from core.dpsql.service import (
    CI_CAVEAT,
    NON_PRIVATE_LABEL,
    Prepared,
    QueryResult,
    explain,
    ledger_row,
    prepare,
    stage_tables,
)
from core.dpsql.sql.bigquery import to_bigquery
from core.dpsql.sql.expressions import DIALECTS
from core.registry import Dataset

__all__ = [
    "CI_CAVEAT", "DIALECTS", "ENGINES", "NON_PRIVATE_LABEL", "PAGE_LIMITS", "POOL", "Prepared",
    "QueryResult", "caps_of", "engine_for", "explain", "planned_cost", "prepare",
    "ledger_row", "stage_tables",
    "to_bigquery",
]  # fmt: skip

PAGE_LIMITS = POOL.limits(ResourceLimits(timeout_s=120.0))  # one pool slot's share of memory
ENGINES = ("DuckDB", "Spark")  # Spark only when PySpark and Java 17 are available (issue 11)


@st.cache_resource(show_spinner="Loading tables into the DuckDB sandbox…", max_entries=4)
def _duckdb(key: str, _catalog: Catalog) -> Engine:
    return Engine(_catalog, limits=PAGE_LIMITS)


@st.cache_resource(
    show_spinner="Starting Spark (local[2]) and registering the tables…", max_entries=2
)
def _spark(key: str, _catalog: Catalog):
    from core.dpsql.execute.spark_engine import SparkEngine  # optional extra: on demand

    return SparkEngine(_catalog, timeout_s=PAGE_LIMITS.timeout_s)


def engine_for(name: str, key: str, catalog: Catalog):
    """The engine `name` for the catalog identified by `key` (cached across sessions)."""
    return _spark(key, catalog) if name == "Spark" else _duckdb(key, catalog)


def caps_of(dataset: Dataset | None) -> tuple[float | None, float | None]:
    """The per-query caps (ε, δ): a registered dataset's policy (the registry enforces them);
    none for unregistered data."""
    if dataset is None:
        return None, None
    return dataset.policy.max_epsilon_per_query, dataset.policy.max_delta_per_query


def planned_cost(prepared: Prepared) -> tuple[float, float]:
    """The (ε, δ) a run of `prepared` is charged: the composition of the mechanisms that will
    draw (`prepared.cost`)."""
    return prepared.cost.epsilon, prepared.cost.delta
