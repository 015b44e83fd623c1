"""One bounded pool for every DP SQL execution of a process (issue 19: a server many people
share).

An app server runs every browser session's queries in one process. Without a bound, N sessions
running at once each get DuckDB's full memory limit and all the threads: memory grows with N
until the server is killed, losing every session's results after their charges. `POOL` admits
at most `slots` executions at a time, first come first served; the others wait in a queue whose
position is observable (`slot(on_wait=...)` reports it, `state()` reads it). Each execution's
DuckDB memory limit is the pool's total divided by the slots (`limits`), so the memory of all
running queries together stays within the total.

Configuration (environment, read once): `DPX_SQL_SLOTS` (default: the number of CPUs, 1 to 4)
and `DPX_SQL_MEMORY` (DuckDB syntax; default `DEFAULT_POOL_MEMORY`, 2 GB or half of RAM if
that is less): the DuckDB memory of all running queries together, so that an app server many
people share stays within a few GB. A CLI run (one query per process) keeps
`limits.DEFAULT_MEMORY_LIMIT`.
"""

from __future__ import annotations

import os
from dataclasses import replace

from core.dpsql.limits import DEFAULT_MEMORY_LIMIT, ResourceLimits
from core.errors import InputError
from core.pool import SlotPool, slots_from_env

_UNITS = {"KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40, "KIB": 2**10, "MIB": 2**20,
          "GIB": 2**30, "TIB": 2**40, "B": 1}  # fmt: skip


def memory_bytes(text: str) -> int:
    """'512MB' / '4GB' (DuckDB syntax) in bytes."""
    t = str(text).strip().upper().replace(" ", "")
    for unit in sorted(_UNITS, key=len, reverse=True):
        if t.endswith(unit) and t[: -len(unit)].replace(".", "", 1).isdigit():
            return int(float(t[: -len(unit)]) * _UNITS[unit])
    raise InputError(f"DPX-S008 memory must look like '512MB' or '4GB', got {text!r}.")


class ExecutionPool(SlotPool):
    """At most `slots` executions at once, FIFO; `memory` (DuckDB syntax) shared among them."""

    def __init__(self, slots: int, memory: str):
        super().__init__(slots)
        self.memory = memory
        self._per_slot_mb = max(64, memory_bytes(memory) // slots // 2**20)

    @property
    def memory_per_slot(self) -> str:
        return f"{self._per_slot_mb}MB"

    def limits(self, base: ResourceLimits) -> ResourceLimits:
        """`base` with the memory limit of one slot (engines are created with this)."""
        return replace(base, memory_limit=self.memory_per_slot)


def _default_memory() -> str:
    two_gb = 2 * 2**30
    return f"{min(two_gb, memory_bytes(DEFAULT_MEMORY_LIMIT)) // 2**20}MB"


DEFAULT_POOL_MEMORY = _default_memory()


POOL = ExecutionPool(
    slots_from_env("DPX_SQL_SLOTS"), os.environ.get("DPX_SQL_MEMORY", DEFAULT_POOL_MEMORY)
)
