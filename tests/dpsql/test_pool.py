"""The process-wide execution pool (issue 19 item 3): at most `slots` DP SQL executions at once,
the rest queued first come first served with their position reported, and DuckDB's memory
limit divided among the slots."""

from __future__ import annotations

import threading

import pytest

from core.dpsql.execute.pool import POOL, ExecutionPool, memory_bytes
from core.dpsql.limits import ResourceLimits
from core.errors import InputError


def _wait_until(predicate) -> None:
    done = threading.Event()
    while not predicate():
        done.wait(0.01)


def test_memory_is_divided_among_the_slots():
    pool = ExecutionPool(4, "2GB")
    assert pool.memory_per_slot == "512MB"
    limits = pool.limits(ResourceLimits(threads=1, timeout_s=9))
    assert limits.memory_limit == "512MB" and limits.timeout_s == 9 and limits.threads == 1
    assert memory_bytes(POOL.memory) >= memory_bytes(POOL.memory_per_slot) * POOL.slots
    with pytest.raises(InputError, match="DPX-S008"):
        ExecutionPool(0, "1GB")
    with pytest.raises(InputError, match="DPX-S008"):
        memory_bytes("lots")


def test_at_most_slots_run_and_the_rest_queue_in_order_with_their_position():
    pool = ExecutionPool(2, "1GB")
    release = [threading.Event() for _ in range(6)]
    started: list[int] = []
    positions: dict[int, list[int]] = {i: [] for i in range(6)}
    peak = [0]
    lock = threading.Lock()

    def worker(i: int) -> None:
        with pool.slot(on_wait=positions[i].append):
            with lock:
                started.append(i)
                peak[0] = max(peak[0], pool.state().running)
            release[i].wait()

    threads = []
    for i in range(6):  # queue them one after the other, so the order is known
        t = threading.Thread(target=worker, args=(i,))
        t.start()
        threads.append(t)
        _wait_until(lambda i=i: len(started) + pool.state().waiting == i + 1)
    assert pool.state().running == 2 and pool.state().waiting == 4
    assert started == [0, 1]
    assert positions[2][0] == 2 and positions[5][0] == 5  # 2 running + those queued ahead
    for i in range(6):
        release[i].set()
        _wait_until(lambda i=i: len(started) >= min(6, i + 3))
    for t in threads:
        t.join()
    assert started == [0, 1, 2, 3, 4, 5]  # first come, first served
    assert peak[0] <= 2
    assert all(p == sorted(p, reverse=True) for p in positions.values())  # only moves forward
    assert pool.state().running == 0 and pool.state().waiting == 0


def test_a_failing_execution_frees_its_slot():
    pool = ExecutionPool(1, "1GB")
    with pytest.raises(RuntimeError), pool.slot():
        raise RuntimeError("the query failed")
    with pool.slot():
        assert pool.state().running == 1
    assert pool.state().running == 0
