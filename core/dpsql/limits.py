"""Resource limits of DP SQL: DuckDB threads, memory and a wall-clock timeout (spec §4.1),
and the time limit on analysing a query (no data read).

The size limits on the query text and its tree are a check (`core.dpsql.check.size`). The
*timeout* and *out-of-memory* during execution happen after the data was read, so `run` keeps
the charge and says so (see `ExecutionStopped`).
"""

from __future__ import annotations

import math
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from core.errors import InputError

# Wall-clock limit of one query's execution in DuckDB (the CLI's `--timeout` default).
DEFAULT_TIMEOUT_S = 60.0
# A ceiling on the time limit itself (one day): a longer run is not an interactive query.
MAX_TIMEOUT_S = 86_400.0
# DuckDB threads: at most 4, never more than the machine has.
DEFAULT_THREADS = max(1, min(4, os.cpu_count() or 1))


def _half_of_memory() -> str:
    """Half of the machine's physical memory (4 GB where it cannot be read)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "4GB"
    return f"{max(256, total // 2 // 2**20)}MB"


# DuckDB memory limit; DuckDB raises OutOfMemoryException beyond it instead of swapping the
# machine to a halt. Half of physical memory leaves room for Python and the rest of the app.
DEFAULT_MEMORY_LIMIT = _half_of_memory()


@dataclass(frozen=True)
class ResourceLimits:
    """What one DuckDB sandbox may use: threads, memory (DuckDB syntax, e.g. "4GB") and the
    wall-clock seconds one query may run before the connection is interrupted."""

    threads: int = DEFAULT_THREADS
    memory_limit: str = DEFAULT_MEMORY_LIMIT
    timeout_s: float = DEFAULT_TIMEOUT_S
    # None: the memory limit is hard (a query beyond it stops, DPX-E005). A directory: DuckDB
    # may write what does not fit to a private (0700) subdirectory there, removed afterwards.
    spill_directory: str | None = None

    def __post_init__(self):
        check_timeout(self.timeout_s)
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise InputError(
                f"DPX-S008 threads must be an integer >= 1, got {self.threads}. Fix: e.g. 4."
            )
        text = str(self.memory_limit).strip().upper()
        number = text.rstrip("KMGTIB")
        if not number or not number.replace(".", "", 1).isdigit() or float(number) <= 0:
            raise InputError(
                f"DPX-S008 memory_limit must look like '512MB' or '4GB', got {self.memory_limit!r}. "
                "Fix: e.g. '4GB'."
            )


def check_timeout(seconds: float) -> float:
    """A time limit must be a finite number of seconds in (0, MAX_TIMEOUT_S]."""
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or not 0 < seconds <= MAX_TIMEOUT_S
    ):
        raise InputError(
            f"DPX-S008 the time limit must be a number of seconds in (0, {MAX_TIMEOUT_S:g}], "
            f"got {seconds}. Fix: e.g. --timeout 60."
        )
    return float(seconds)


DEFAULT_LIMITS = ResourceLimits()


class ExecutionStopped(InputError):
    """DuckDB stopped a query after it had started reading data (timeout, out of memory)."""


class AnalysisTimeout(BaseException):  # noqa: N818 - BaseException: no `except Exception` swallows it
    """Parsing and validating a query (no data read) took longer than the time limit."""


@contextmanager
def analysis_deadline(seconds: float) -> Iterator[None]:
    """Raise `AnalysisTimeout` if the block (pure-Python analysis, no data) runs past `seconds`.

    Uses SIGALRM, so it only arms in the main thread of a POSIX process (the CLI); elsewhere it
    does nothing and the structural limits of `check_text` / `check_tree` bound the work."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def on_alarm(signum, frame):
        raise AnalysisTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
