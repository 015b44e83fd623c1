"""Charged runs that were never delivered (issue 17): a process that died after its charge, or a
record that could not be written. Listed and closed as failed; their charges stay (charge
before compute). A mixin of `core.registry.registry.Registry`."""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime

from core.registry.models import Release, Status


class StrandedRuns:
    """`stranded` and `reconcile` (uses the registry's `releases`, `release`, `_set_status`)."""

    def stranded(self, dataset: str | None = None) -> list[Release]:
        """Charged runs that will not finish on their own: status `undelivered`, or `charged`
        by a process of this host that no longer runs (or by another host, after a day)."""
        return [
            r
            for r in self.releases(
                dataset, statuses=(Status.UNDELIVERED, Status.CHARGED), bodies=False
            )
            if r.status is Status.UNDELIVERED
            or (r.status is Status.CHARGED and not _worker_alive(r.worker, r.time))
        ]

    def reconcile(self, dataset: str | None = None) -> list[Release]:
        """Close every stranded run as failed ("charged, not delivered"); the charge stays
        (charge before compute). Returns the runs closed."""
        closed = []
        for r in self.stranded(dataset):
            note = r.note or "the process stopped after the charge; nothing was delivered"
            self._set_status(r.id, Status.FAILED, f"charged, not delivered: {note}")
            closed.append(self.release(r.id))
        return closed


WORKER = f"{socket.gethostname()}:{os.getpid()}"
_STALE_ELSEWHERE_S = 24 * 3600


def _worker_alive(worker: str, time: str) -> bool:
    """Is the process that charged a run still running? Runs of another host (or with no
    recorded worker) are presumed alive for a day after their charge."""
    host, _, pid = worker.rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        if int(pid) < 1:
            return False
        if int(pid) == os.getpid():
            return True
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    try:
        age = (datetime.now(UTC) - datetime.fromisoformat(time)).total_seconds()
    except ValueError:
        return False
    return age < _STALE_ELSEWHERE_S
