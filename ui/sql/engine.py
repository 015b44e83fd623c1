"""Every call the DP SQL page makes into `core.dpsql`'s service and engines, in one place (the
DP SQL stages are being restructured: issue 19; the lead rewires `run_query` to
`core.governance.govern` with `service.prepare/run(prepared, engine, accountant)`).

Engines are cached resources shared by the sessions of this server (bounded: `max_entries`);
each one runs under the page's resource limits (a watchdog stops runaway queries).
"""

from __future__ import annotations

import streamlit as st

from core.dpsql.caps import NO_CAPS, QueryCaps
from core.dpsql.catalog import Catalog
from core.dpsql.engine import Engine
from core.dpsql.export import to_bigquery
from core.dpsql.limits import ResourceLimits
from core.dpsql.mechanisms import charges
from core.dpsql.rewrite import DIALECTS
from core.dpsql.service import (
    CI_CAVEAT,
    NON_PRIVATE_LABEL,
    Prepared,
    QueryResult,
    explain,
    prepare,
    run,
    stage_tables,
)
from core.privacy import BudgetLedger, Noise
from core.registry import Dataset

__all__ = [
    "CI_CAVEAT", "DIALECTS", "ENGINES", "NON_PRIVATE_LABEL", "PAGE_LIMITS", "Prepared",
    "QueryResult", "caps_of", "engine_for", "explain", "planned_cost", "prepare", "run_query",
    "stage_tables",
    "to_bigquery",
]  # fmt: skip

PAGE_LIMITS = ResourceLimits(timeout_s=120.0)
ENGINES = ("DuckDB", "Spark")  # Spark only when PySpark and Java 17 are available (issue 11)


@st.cache_resource(show_spinner="Loading tables into the DuckDB sandbox…", max_entries=4)
def _duckdb(key: str, _catalog: Catalog) -> Engine:
    return Engine(_catalog, limits=PAGE_LIMITS)


@st.cache_resource(
    show_spinner="Starting Spark (local[2]) and registering the tables…", max_entries=2
)
def _spark(key: str, _catalog: Catalog):
    from core.dpsql.spark_engine import SparkEngine  # optional extra: imported on demand

    return SparkEngine(_catalog, timeout_s=PAGE_LIMITS.timeout_s)


def engine_for(name: str, key: str, catalog: Catalog):
    """The engine `name` for the catalog identified by `key` (cached across sessions)."""
    return _spark(key, catalog) if name == "Spark" else _duckdb(key, catalog)


def caps_of(dataset: Dataset | None) -> QueryCaps:
    """The per-query caps: a registered dataset's policy; none for unregistered data."""
    if dataset is None:
        return NO_CAPS
    p = dataset.policy
    return QueryCaps(
        p.max_epsilon_per_query, p.max_delta_per_query, f"dataset `{dataset.name}` policy"
    )


def planned_cost(prepared: Prepared) -> tuple[float, float]:
    """The (ε, δ) a run of `prepared` is charged, from the mechanisms that will draw.
    TODO(dpsql): `prepared.cost` (a `Cost`) once the restructured service lands."""
    planned = charges(prepared.plan)
    return sum(c.epsilon for c in planned), sum(c.delta for c in planned)


def run_query(
    prepared: Prepared, engine, noise: Noise, ledger: BudgetLedger, caps: QueryCaps
) -> QueryResult:
    """Charge `ledger` (the registry's, for recorded data), run, release noisy rows.

    Privacy claim: (ε, δ)-DP at unit level with the charges of the prepared plan, written to
    `ledger` before any data is read (see `core.dpsql.service.run`)."""
    return run(prepared, engine, noise, ledger, caps)
