"""The time limit of a `dpx sql` run, decided before the charge from public facts only.

A time limit that fires after the charge is a lost release: the budget is spent and nothing is
released. So the limit is decided before anything is charged, from the tables' file sizes (a
public fact: the owner registered the files, and the size says nothing about any one person):

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
from pathlib import Path

from core.dpsql.limits import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from core.errors import InputError

MB = 1_000_000


@dataclass(frozen=True)
class Throughput:
    """An engine's speed on this machine, bracketed: `startup_s` before the first row, then
    `slow_mb_s` (a pessimistic rate, for the default) and `fast_mb_s` (a rate it never beats,
    for refusing a limit that cannot be met)."""

    startup_s: float
    slow_mb_s: float
    fast_mb_s: float

    def slowest(self, size_bytes: int) -> float:
        return self.startup_s + size_bytes / MB / self.slow_mb_s

    def fastest(self, size_bytes: int) -> float:
        return size_bytes / MB / self.fast_mb_s


class EngineKind(Enum):
    DUCKDB = "duckdb"
    SPARK = "spark"


# Measured (bench/scale_sql.py, docs/benchmarks/scale_sql.md, 2 cores, load 3-7): on a 474 MB
# Parquet file (50M rows) DuckDB's DP query took 6 s with each user in one partition (~80 MB/s)
# and 55 s with users spread over ~7 partitions (~8.6 MB/s); plain DuckDB never exceeded
# ~160 MB/s. Local Spark took 193 s for the same file (~2.5 MB/s; issue 22) after ~15 s start.
THROUGHPUT = {
    EngineKind.DUCKDB: Throughput(startup_s=1.0, slow_mb_s=5.0, fast_mb_s=2000.0),
    EngineKind.SPARK: Throughput(startup_s=20.0, slow_mb_s=1.0, fast_mb_s=200.0),
}
MARGIN = 2.0  # the scaled default is this many times the pessimistic estimate


@dataclass(frozen=True)
class TimeLimit:
    """The decided limit and why (shown in the output)."""

    seconds: float
    size_bytes: int
    scaled: bool
    given: bool

    def line(self) -> str:
        size = f"{self.size_bytes / MB:,.0f} MB" if self.size_bytes >= MB else "< 1 MB"
        if self.given:
            return f"time limit: {self.seconds:g} s (--timeout; tables {size})"
        if self.scaled:
            return f"time limit: {self.seconds:g} s (scaled for {size} of tables)"
        return f"time limit: {self.seconds:g} s (default; tables {size})"

    def to_json(self) -> dict:
        return {
            "seconds": self.seconds,
            "table_bytes": self.size_bytes,
            "scaled": self.scaled,
            "given": self.given,
        }


def table_bytes(paths) -> int:
    """The summed size of the table files (0 for a path that is not a file: the loader
    explains that later)."""
    total = 0
    for path in paths:
        try:
            total += Path(path).stat().st_size
        except OSError:
            continue
    return total


def decide(given: float | None, size_bytes: int, engine: EngineKind) -> TimeLimit:
    """The time limit for tables of `size_bytes` on `engine`: `given` (checked against the
    fastest the engine could read them) or the default scaled for the size. Public facts only."""
    speed = THROUGHPUT[engine]
    if given is not None:
        floor = speed.fastest(size_bytes)
        if given < floor:
            raise InputError(
                f"DPX-S009 --timeout {given:g} s is too short for {size_bytes / MB:,.0f} MB of "
                f"tables on {engine.value}: reading them alone takes more than {floor:.1f} s. "
                "Nothing was charged. Fix: drop --timeout (the default is scaled for the size) "
                f"or give at least --timeout {math.ceil(MARGIN * speed.slowest(size_bytes))}."
            )
        return TimeLimit(float(given), size_bytes, scaled=False, given=True)
    scaled = math.ceil(MARGIN * speed.slowest(size_bytes))
    if scaled <= DEFAULT_TIMEOUT_S:
        return TimeLimit(DEFAULT_TIMEOUT_S, size_bytes, scaled=False, given=False)
    return TimeLimit(float(min(scaled, MAX_TIMEOUT_S)), size_bytes, scaled=True, given=False)
