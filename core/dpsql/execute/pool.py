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
and `DPX_SQL_MEMORY` (DuckDB syntax, default: `limits.DEFAULT_MEMORY_LIMIT`, half of RAM).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from core.dpsql.limits import DEFAULT_MEMORY_LIMIT, ResourceLimits
from core.errors import InputError

_UNITS = {"KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40, "KIB": 2**10, "MIB": 2**20,
          "GIB": 2**30, "TIB": 2**40, "B": 1}  # fmt: skip


def memory_bytes(text: str) -> int:
    """'512MB' / '4GB' (DuckDB syntax) in bytes."""
    t = str(text).strip().upper().replace(" ", "")
    for unit in sorted(_UNITS, key=len, reverse=True):
        if t.endswith(unit) and t[: -len(unit)].replace(".", "", 1).isdigit():
            return int(float(t[: -len(unit)]) * _UNITS[unit])
    raise InputError(f"DPX-S008 memory must look like '512MB' or '4GB', got {text!r}.")


@dataclass(frozen=True)
class PoolState:
    running: int
    waiting: int
    slots: int


class ExecutionPool:
    """At most `slots` executions at once, FIFO; `memory` (DuckDB syntax) shared among them."""

    def __init__(self, slots: int, memory: str):
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise InputError(f"DPX-S008 the pool needs at least one slot, got {slots}.")
        self.slots = slots
        self.memory = memory
        self._per_slot_mb = max(64, memory_bytes(memory) // slots // 2**20)
        self._cond = threading.Condition()
        self._running = 0
        self._queue: deque[object] = deque()

    @property
    def memory_per_slot(self) -> str:
        return f"{self._per_slot_mb}MB"

    def limits(self, base: ResourceLimits) -> ResourceLimits:
        """`base` with the memory limit of one slot (engines are created with this)."""
        return replace(base, memory_limit=self.memory_per_slot)

    def state(self) -> PoolState:
        with self._cond:
            return PoolState(self._running, len(self._queue), self.slots)

    @contextmanager
    def slot(self, on_wait: Callable[[int], None] | None = None) -> Iterator[None]:
        """Run the block in a slot; while queued, `on_wait(k)` is called whenever the number
        k of executions ahead of this one (running or queued) changes."""
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            last = None
            while not (self._running < self.slots and self._queue[0] is ticket):
                ahead = self._running + self._queue.index(ticket)
                if on_wait is not None and ahead != last:
                    last = ahead
                    self._cond.release()  # report without holding the lock
                    try:
                        on_wait(ahead)
                    finally:
                        self._cond.acquire()
                    continue
                self._cond.wait(timeout=1.0)
            self._queue.popleft()
            self._running += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()


def _default_slots() -> int:
    text = os.environ.get("DPX_SQL_SLOTS")
    if text and text.strip().isdigit() and int(text) >= 1:
        return int(text)
    return max(1, min(4, os.cpu_count() or 1))


POOL = ExecutionPool(_default_slots(), os.environ.get("DPX_SQL_MEMORY", DEFAULT_MEMORY_LIMIT))
