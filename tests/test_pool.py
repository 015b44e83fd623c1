"""The bounded pool of slots (core/pool.py) every heavy action of the app server runs in: at
most `slots` at once, the rest queued first come first served with their position reported,
and a block that fails or is stopped frees its place."""

from __future__ import annotations

import threading

import pytest

from core.errors import InputError
from core.pool import SlotPool, slots_from_env


def _wait_until(predicate) -> None:
    done = threading.Event()
    while not predicate():
        done.wait(0.01)


def test_slot_counts_come_from_the_environment_or_the_cpus(monkeypatch):
    monkeypatch.setenv("DPX_TEST_SLOTS", "3")
    assert slots_from_env("DPX_TEST_SLOTS") == 3
    for bad in ("0", "-1", "two", ""):
        monkeypatch.setenv("DPX_TEST_SLOTS", bad)
        assert 1 <= slots_from_env("DPX_TEST_SLOTS") <= 4
    with pytest.raises(InputError, match="DPX-S008"):
        SlotPool(0)


def test_at_most_slots_run_and_the_rest_queue_in_order_with_their_position():
    pool = SlotPool(2)
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
    pool = SlotPool(1)
    with pytest.raises(RuntimeError), pool.slot():
        raise RuntimeError("the query failed")
    with pool.slot():
        assert pool.state().running == 1
    assert pool.state().running == 0


def test_a_session_stopped_while_queued_leaves_the_queue():
    """A Streamlit rerun raises inside the queued script (here: in the position callback); its
    place in the queue must go with it, or every later query would wait forever."""
    pool = SlotPool(1)
    release = threading.Event()
    holder = threading.Thread(target=lambda: _hold(pool, release))
    holder.start()
    _wait_until(lambda: pool.state().running == 1)

    def stopped(ahead: int) -> None:
        raise KeyboardInterrupt("the session reran")

    with pytest.raises(KeyboardInterrupt), pool.slot(on_wait=stopped):
        pass
    assert pool.state().waiting == 0
    release.set()
    holder.join()
    with pool.slot():  # the next query runs at once
        assert pool.state().running == 1


def _hold(pool: SlotPool, release: threading.Event) -> None:
    with pool.slot():
        release.wait()
