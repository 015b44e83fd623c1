"""The time limit of a `dpx sql` run, decided before the charge from public facts only.

A time limit that fires after the charge is a lost release: the budget is spent and nothing is
released. So the limit is decided before anything is charged, from the tables' declared size
classes (an upper bound on rows the owner stated at registration, `core.data.declared`) — never
from the files' bytes or row counts, which move with one person's rows:

- no `--timeout` given: the default (60 s) scaled up for the size, at a throughput well below
  what the engine reaches on this machine (`docs/benchmarks/scale_sql.md`), with a margin;
- a `--timeout` given that is shorter than the engine could possibly need to read the tables
  (at a throughput well above what it reaches): refused before charging (DPX-S009).

Neither depends on the data's values, so neither the decision nor a refusal leaks anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from core.dpsql.limits import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from core.errors import InputError


@dataclass(frozen=True)
class Throughput:
    """An engine's speed on this machine, bracketed: `startup_s` before the first row, then
    `slow_rows_s` (a pessimistic rate, for the default) and `fast_rows_s` (a rate it never
    beats, for refusing a limit that cannot be met)."""

    startup_s: float
    slow_rows_s: float
    fast_rows_s: float

    def slowest(self, rows: int) -> float:
        return self.startup_s + rows / self.slow_rows_s

    def fastest(self, rows: int) -> float:
        return rows / self.fast_rows_s


class EngineKind(Enum):
    DUCKDB = "duckdb"
    SPARK = "spark"


# Measured (bench/scale_sql.py, docs/benchmarks/scale_sql.md, 2 cores, load 3-7): on 50M rows
# DuckDB's DP query took 6 s with each user in one partition (~8M rows/s) and 55 s with users
# spread over ~7 partitions (~0.9M rows/s); plain DuckDB never exceeded ~30M rows/s. Local
# Spark took 193 s for the same 50M rows (issue 22) after ~15 s start, and 315 s for 10M rows
# spread over partitions (issue 30: ~32k rows/s): its pessimistic rate is below that.
THROUGHPUT = {
    EngineKind.DUCKDB: Throughput(startup_s=1.0, slow_rows_s=250_000.0, fast_rows_s=2e8),
    EngineKind.SPARK: Throughput(startup_s=25.0, slow_rows_s=20_000.0, fast_rows_s=2e7),
}
MARGIN = 2.0  # the scaled default is this many times the pessimistic estimate


@dataclass(frozen=True)
class TimeLimit:
    """The decided limit and why (shown in the output): the seconds and the declared rows
    (the sum of the tables' size classes) they were decided from."""

    seconds: float
    declared_rows: int
    scaled: bool
    given: bool

    def line(self) -> str:
        size = f"up to {self.declared_rows:,} declared rows"
        if self.given:
            return f"time limit: {self.seconds:g} s (--timeout; tables {size})"
        if self.scaled:
            return f"time limit: {self.seconds:g} s (scaled for {size} of tables)"
        return f"time limit: {self.seconds:g} s (default; tables {size})"

    def to_json(self) -> dict:
        return {
            "seconds": self.seconds,
            "declared_rows": self.declared_rows,
            "scaled": self.scaled,
            "given": self.given,
        }


def declared_rows(catalog) -> int:
    """The sum of the catalogue tables' declared size classes (upper bounds on rows)."""
    return sum(spec.schema.max_rows for spec in catalog.tables())


def decide(given: float | None, rows: int, engine: EngineKind) -> TimeLimit:
    """The time limit for tables of up to `rows` declared rows on `engine`: `given` (checked
    against the fastest the engine could read them) or the default scaled for the size class.
    Public facts only."""
    speed = THROUGHPUT[engine]
    if given is not None:
        floor = speed.fastest(rows)
        if given < floor:
            raise InputError(
                f"DPX-S009 --timeout {given:g} s is too short for up to {rows:,} declared rows "
                f"on {engine.value}: reading them alone takes more than {floor:.1f} s. "
                "Nothing was charged. Fix: drop --timeout (the default is scaled for the size) "
                f"or give at least --timeout {math.ceil(MARGIN * speed.slowest(rows))}."
            )
        return TimeLimit(float(given), rows, scaled=False, given=True)
    scaled = math.ceil(MARGIN * speed.slowest(rows))
    if scaled <= DEFAULT_TIMEOUT_S:
        return TimeLimit(DEFAULT_TIMEOUT_S, rows, scaled=False, given=False)
    return TimeLimit(float(min(scaled, MAX_TIMEOUT_S)), rows, scaled=True, given=False)
