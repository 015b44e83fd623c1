"""DP SQL end to end — THE entry point other layers import.

`prepare` (parse, check, plan; reads no data) gives a `Prepared` query whose `mechanisms` are
the exact `core.privacy` objects that will draw its noise and whose `cost` is their
composition. `explain` uses public parameters only. `check_before_charge` refuses everything
that can be refused without reading data (binding against the schema). The caller charges
`prepared.cost` (governance), then `run(prepared, engine, accountant)` executes the staged SQL
and releases noisy rows, drawing through `accountant = Accountant(noise, budget=prepared.cost)`;
`run` charges nothing itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from core.dpsql.catalog import Catalog
from core.dpsql.check.passes import Checking, run_checks
from core.dpsql.execute.engine import Engine
from core.dpsql.execute.partition_order import in_key_order
from core.dpsql.jsonsafe import jsonable
from core.dpsql.parse.dialect import parse_statements
from core.dpsql.parse.ir import DPQuery
from core.dpsql.parse.text import check_text
from core.dpsql.plan.planner import Plan, integer_unit, plan_query
from core.dpsql.plan.report import budget_rows, half_widths, survival
from core.dpsql.plan.statistics import PROTECTS
from core.dpsql.release.noise import Released, release
from core.dpsql.release.post import post_process_query
from core.dpsql.sql.stages import STAGE_CAPTIONS, StagedSQL, stage
from core.errors import InputError
from core.privacy import Accountant, Cost, Mechanism, Noise

NON_PRIVATE_LABEL = "NON-PRIVATE – exact intermediate data — not private, for learning only"
CI_CAVEAT = "95% intervals cover noise only; they exclude clamping and sampling bias"


@dataclass
class Prepared:
    """A checked, planned, staged query; nothing has been read or charged."""

    query: DPQuery
    plan: Plan
    staged: StagedSQL
    catalog: Catalog

    @property
    def mechanisms(self) -> tuple[Mechanism, ...]:
        """The `core.privacy` mechanism objects that `run` will draw through, in drawing
        order (`accountant.mechanisms` equals this after a run)."""
        return self.plan.drawing_order()

    @property
    def cost(self) -> Cost:
        """(ε, δ) of the release: the composition (sum) of its mechanisms' costs."""
        return self.plan.cost

    @property
    def executed_sql(self) -> str:
        return self.staged.sql("duckdb", executable=True, pretty=False)


def prepare(sql: str, catalog: Catalog, noise: Noise, defaults: dict | None = None) -> Prepared:
    """Parse, check (`core.dpsql.check.passes.CHECKS`, in order), plan and stage `sql`. Reads
    no data; the sampling salt comes from `noise`. A query nested deeper than Python's stack
    allows is refused (DPX-S005), never a crash."""
    check_text(sql)
    try:
        checked = run_checks(Checking(sql, catalog, defaults or {}, parse_statements(sql)))
    except RecursionError:
        raise InputError(
            "DPX-S005 the query is nested too deeply to analyse. Fix: flatten nested "
            "expressions or subqueries. Nothing was read or charged."
        ) from None
    salt = int(noise.integers(2**62))
    caps = checked.amplification.row_caps
    integer = integer_unit(checked.sources, catalog)
    plan = plan_query(checked.query, checked.sources, salt, checked.public_source, caps, integer)
    return Prepared(checked.query, plan, stage(plan), catalog)


def explain(prepared: Prepared, dialect: str = "duckdb") -> dict:
    """Everything about a query that follows from public parameters: SQL, split, tau, T, the
    survival curve and the half-widths — read off the mechanism objects."""
    plan = prepared.plan
    th = plan.threshold_info()
    if th is not None:
        span = max(3.0, 4 * th.scale)
        lo, hi = max(1, int(th.integer - span)), int(th.integer + span) + 1
        units = sorted({int(x) for x in np.linspace(lo, hi, 41)} | {1, th.integer})
        selection = f"thresholded: keep partitions whose noisy unit count >= T = {th.integer}"
    else:
        units = []
        selection = "public groups: every key of the public table is released (no threshold)"
    widths = half_widths(plan)
    return {
        "form": plan.query.form,
        "options": plan.query.options.__dict__,
        "stages": [
            {"name": n, "caption": STAGE_CAPTIONS[n], "sql": s.sql(dialect="duckdb", pretty=True)}
            for n, s in prepared.staged.stages
        ],
        "python_steps": [
            f"noised: {_noise_words(plan)} (OpenDP in secure mode) on every cross_user statistic",
            selection,
            "post: HAVING / ORDER BY / LIMIT and select-list arithmetic on released rows only",
        ],
        "rewritten_sql": prepared.staged.sql(dialect),
        "dialect": dialect,
        "budget_split": budget_rows(plan),
        "mechanisms": [jsonable(m.to_json()) for m in prepared.mechanisms],
        "epsilon": prepared.cost.epsilon,
        "delta": prepared.cost.delta,
        "threshold": _threshold_dict(th),
        "survival_curve": survival(plan, units),
        "half_widths_95": {
            o.name: widths.get(o.aggregate_index)
            for o in plan.query.outputs
            if o.aggregate_index is not None
        },
    }


def _noise_words(plan: Plan) -> str:
    if plan.query.options.noise.value == "gaussian":
        return "discrete Gaussian on counts and sums, discrete Laplace on the rest"
    return "discrete Laplace"


def _threshold_dict(th) -> dict:
    if th is None:
        return {"tau": None, "integer": None, "strategy": "PUBLIC_GROUPS"}
    return {
        "tau": th.tau,
        "integer": int(th.integer),
        "epsilon": th.epsilon,
        "scale": th.scale,
        "delta": th.delta,
        "realised_delta": th.realised_delta,
    }


@dataclass
class QueryResult:
    """A release: the post-processed table, its noise-only intervals, and the mechanisms that
    drew its noise (`accountant.mechanisms`, equal to `prepared.mechanisms`)."""

    columns: list[str]
    table: pd.DataFrame
    ci95: dict[str, list[float | None]]
    intervals: dict[str, list[list[float | None]]]
    released: Released
    mechanisms: tuple[Mechanism, ...]
    mode: dict
    record: dict
    session: dict | None = None  # the legacy ledger's summary (core.dpsql.legacy)

    @property
    def cost(self) -> Cost:
        return Cost.of(self.mechanisms)

    def to_dict(self) -> dict:
        th = self.released.threshold
        out = {
            "columns": self.columns,
            "rows": [jsonable(list(row)) for row in self.table.itertuples(index=False)],
            "ci95": self.ci95,
            "intervals95": self.intervals,
            "ci_note": CI_CAVEAT,
            "threshold": _threshold_dict(th),
            "partitions_released": self.released.partitions_released,
            "notes": list(self.released.notes),
            "mechanisms": [jsonable(m.to_json()) for m in self.mechanisms],
            "ledger": [ledger_row(m) for m in self.mechanisms],
            "epsilon_spent": self.cost.epsilon,
            "delta_spent": self.cost.delta,
            "query_record": self.record,
            **self.mode,
        }
        if self.session is not None:
            out["session"] = self.session
        return out


def ledger_row(m: Mechanism) -> dict:
    """One mechanism as the budget-ledger row older readers expect (label, ε, δ)."""
    return {
        "mechanism": m.label,
        "protects": PROTECTS,
        "epsilon": m.cost.epsilon,
        "delta": m.cost.delta,
        "composition": "sequential",
        "group": None,
    }


def check_before_charge(prepared: Prepared, engine: Engine) -> None:
    """Everything that refuses a prepared query without reading data: the generated SQL must
    bind against the engine's schema (DPX-E001). Call before charging `prepared.cost`."""
    engine.bind(prepared.executed_sql)


def run(prepared: Prepared, engine: Engine, accountant: Accountant) -> QueryResult:
    """Run the staged SQL and release noisy rows with intervals. Charges nothing: the caller
    has charged `prepared.cost` and passes `Accountant(noise, budget=prepared.cost)`.

    Privacy claim: the release is (ε, δ)-DP at unit level, (ε, δ) = `prepared.cost`, the
    composition of `prepared.mechanisms`, which are exactly the objects that draw (recorded on
    `accountant`). A budget that does not cover that cost is refused before any data is read
    (`Overdraw`: a fault of the caller). Anything that stops the query after data was read
    (time limit, memory, a masked engine error, an internal error) raises a generic message
    that quotes no data — whether a query fails is a released bit; the governed flow keeps
    the charge and says so.
    """
    accountant.require(prepared.cost, "this query")
    try:
        return _execute(prepared, engine, accountant)
    except InputError:
        raise  # time limit, memory, a masked engine error: generic messages, no data quoted
    except Exception:  # noqa: BLE001 - never a traceback, never data in the message
        raise InputError(
            "DPX-E009 internal error while computing the release (details withheld: they "
            "could depend on private data). Fix: report the query (a fault in DP Explorer, "
            "not in the query); running it again is charged again."
        ) from None


def _execute(prepared: Prepared, engine: Engine, accountant: Accountant) -> QueryResult:
    plan = prepared.plan
    cross = in_key_order(engine.frame(prepared.executed_sql), len(plan.query.keys))
    rel = release(plan, cross, accountant)
    table, order = post_process_query(plan.query, rel.table)
    columns = [o.name for o in plan.query.outputs]
    ci95: dict[str, list[float | None]] = {}
    intervals: dict[str, list[list[float | None]]] = {}
    for o in plan.query.outputs:
        if o.aggregate_index is None:
            continue
        iv = rel.intervals[o.aggregate_index][order] if len(order) else np.zeros((0, 2))
        values = table[o.name].to_numpy(dtype=float)
        if np.all(np.isnan(iv)) and len(iv):
            ci95[o.name] = [None] * len(values)
            intervals[o.name] = [[None, None]] * len(values)
            continue
        ci95[o.name] = [float(max(v - lo, hi - v)) for v, (lo, hi) in zip(values, iv, strict=True)]
        intervals[o.name] = [[float(lo), float(hi)] for lo, hi in iv]
    return QueryResult(
        columns,
        table,
        ci95,
        intervals,
        rel,
        accountant.mechanisms,
        accountant.noise.describe(),
        query_record(plan, rel),
    )


def query_record(plan: Plan, rel: Released) -> dict:
    """An audit record of one charged query (spec §2.10): what ran, at which parameters."""
    q = plan.query
    return {
        "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
        "query_sha256": hashlib.sha256(q.text.encode()).hexdigest(),
        "query": q.text,
        "form": q.form,
        "epsilon": q.options.epsilon,
        "delta": q.options.delta,
        "max_groups_contributed": q.options.max_groups_contributed,
        "max_rows_per_group": q.options.max_rows_per_group,
        "tau": None if rel.threshold is None else rel.threshold.tau,
        "threshold": None if rel.threshold is None else int(rel.threshold.integer),
        "realised_delta": 0.0 if rel.threshold is None else rel.threshold.realised_delta,
        "status": "charged",
    }


def stage_tables(prepared: Prepared, engine: Engine, limit: int = 50) -> dict[str, pd.DataFrame]:
    """Per-stage intermediate tables for teaching and the data owner — NOT private."""
    return {
        name: _displayable(engine.frame(prepared.staged.stage_sql(name, limit=limit), exact=False))
        for name, _ in prepared.staged.stages
    }


def _displayable(frame: pd.DataFrame) -> pd.DataFrame:
    """Integers beyond 64 bits (the 128-bit sampling key `_r`, HUGEINT sums) as text, which
    tables and Arrow can show."""

    def wide(value) -> bool:
        return isinstance(value, int) and not -(2**63) <= value < 2**63

    for column in frame.columns:
        if frame[column].dtype == object and frame[column].map(wide).any():
            frame[column] = frame[column].map(lambda v: v if v is None else str(v))
    return frame
