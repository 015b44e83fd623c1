"""The process-wide DP SQL execution pool (issue 19 item 3): DuckDB's memory limit divided
among its slots (the queueing itself is `core.pool.SlotPool`'s, tested in tests/test_pool.py)."""

from __future__ import annotations

import pytest

from core.dpsql.execute.pool import POOL, ExecutionPool, memory_bytes
from core.dpsql.limits import ResourceLimits
from core.errors import InputError


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
