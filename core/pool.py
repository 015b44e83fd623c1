"""A bounded first-come-first-served pool of slots, shared by the threads of one process.

An app server runs every browser session in one process. An action that builds a release
(a DP SQL query, a location build, a PP publication, a planner's simulation, a report) takes
memory and CPU in proportion to its input; without a bound, N sessions acting at once take N
times as much, until the server is killed and every session loses its results after their
charges. A `SlotPool` admits at most `slots` blocks at a time, in arrival order; the others
wait in a queue whose position the waiting caller is told (`slot(on_wait=...)`) and anyone
can read (`state()`). The pool decides only *when* an action runs, never *what* it computes,
so it changes no release and no charge.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from core.errors import InputError

MAX_DEFAULT_SLOTS = 4


@dataclass(frozen=True)
class PoolState:
    running: int
    waiting: int
    slots: int


def slots_from_env(name: str) -> int:
    """The slot count in environment variable `name` (an integer >= 1), else the number of
    CPUs (1 to `MAX_DEFAULT_SLOTS`): more slots than cores only adds memory, not speed."""
    text = os.environ.get(name, "").strip()
    if text.isdigit() and int(text) >= 1:
        return int(text)
    return max(1, min(MAX_DEFAULT_SLOTS, os.cpu_count() or 1))


class SlotPool:
    """At most `slots` blocks at once, first come first served."""

    def __init__(self, slots: int):
        if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
            raise InputError(f"DPX-S008 the pool needs at least one slot, got {slots}.")
        self.slots = slots
        self._cond = threading.Condition()
        self._running = 0
        self._queue: deque[object] = deque()

    def _wait_turn(self, ticket: object, on_wait: Callable[[int], None] | None) -> None:
        """Block (holding the condition's lock) until `ticket` is first and a slot is free."""
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

    def state(self) -> PoolState:
        with self._cond:
            return PoolState(self._running, len(self._queue), self.slots)

    @contextmanager
    def slot(self, on_wait: Callable[[int], None] | None = None) -> Iterator[None]:
        """Run the block in a slot; while queued, `on_wait(k)` is called whenever the number
        k of actions ahead of this one (running or queued) changes."""
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            try:
                self._wait_turn(ticket, on_wait)
            except BaseException:  # a stopped or rerun script leaves the queue, never blocks it
                self._queue.remove(ticket)
                self._cond.notify_all()
                raise
            self._queue.popleft()
            self._running += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()
