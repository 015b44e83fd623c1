"""SQLite failures of the registry as one-line messages (issue 17).

Any `sqlite3.Error` after the registry is open means one of a few things for the person at the
keyboard: the file is damaged, the disk is full, the file is read-only, another process holds
the lock for too long, or the file cannot be opened. `registry_error` tells them apart by
SQLite's result code (`sqlite_errorcode`; the text as a fallback) and says what to do.
`registry_errors(path)` is a context manager AND a decorator that converts them:

    with registry_errors(path):
        con.execute(...)

    @registry_errors(path_of_registry)
    def charge(...): ...
"""

from __future__ import annotations

import sqlite3
from contextlib import ContextDecorator
from pathlib import Path

from core.errors import InputError

# SQLite primary result codes (https://sqlite.org/rescode.html)
SQLITE_PERM = 3
SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_NOMEM = 7
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_CORRUPT = 11
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26

RESTORE = "dpx dataset restore BACKUP --force"


class RegistryError(InputError):
    """The registry database failed (damaged, full, read-only, locked, unopenable): one line
    with what happened and what to do; the CLI exits 2 and the app shows it."""


SQLITE_IOERR_SHMSIZE = SQLITE_IOERR | (19 << 8)  # no space for the shared-memory file


def _code(err: sqlite3.Error) -> int | None:
    code = getattr(err, "sqlite_errorcode", None)
    if code == SQLITE_IOERR_SHMSIZE:
        return SQLITE_FULL
    if isinstance(code, int):
        return code & 0xFF  # extended codes carry the primary code in the low byte
    text = str(err).lower()
    for needle, primary in (
        ("malformed", SQLITE_CORRUPT),
        ("not a database", SQLITE_NOTADB),
        ("disk is full", SQLITE_FULL),
        ("readonly", SQLITE_READONLY),
        ("read-only", SQLITE_READONLY),
        ("locked", SQLITE_BUSY),
        ("unable to open", SQLITE_CANTOPEN),
        ("disk i/o", SQLITE_IOERR),
    ):
        if needle in text:
            return primary
    return None


def is_disk_full(err: sqlite3.Error) -> bool:
    """Did SQLite fail because the disk (or its quota) is full?"""
    return _code(err) == SQLITE_FULL


def registry_error(err: sqlite3.Error, path: str | Path | None = None) -> RegistryError:
    """The one-line `RegistryError` for an SQLite failure of the registry at `path`."""
    where = f" {path}" if path else ""
    detail = " ".join(str(err).split()) or type(err).__name__
    code = _code(err)
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return RegistryError(
            f"the registry database{where} is damaged ({detail}); nothing more was recorded. "
            f"Fix: restore a backup with `{RESTORE}` (see README, 'Registry backups'); do not "
            "delete the file: it holds the spent budgets."
        )
    if code == SQLITE_FULL:
        return RegistryError(
            f"the disk holding the registry{where} is full ({detail}); the registry could not "
            "record this step. Fix: free space on that disk, then run the command again "
            "(`dpx dataset reconcile` closes a release that was charged but could not be "
            "recorded)."
        )
    if code in (SQLITE_READONLY, SQLITE_PERM):
        return RegistryError(
            f"the registry{where} cannot be written ({detail}). Fix: make the file and its "
            "directory writable for you, or use another --registry DIR."
        )
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return RegistryError(
            f"the registry{where} stayed locked by another process ({detail}). Fix: wait for "
            "the other dpx command or app to finish, then run again."
        )
    if code == SQLITE_CANTOPEN:
        return RegistryError(
            f"cannot open the registry{where} ({detail}). Fix: pass a writable directory with "
            "--registry DIR."
        )
    if code in (SQLITE_IOERR, SQLITE_NOMEM):
        return RegistryError(
            f"the registry{where} could not be read or written ({detail}). Fix: check the disk "
            "(space, errors), then run again."
        )
    return RegistryError(
        f"the registry database{where} failed ({detail}). Fix: check it with `dpx dataset "
        f"list`; if it is damaged, restore a backup with `{RESTORE}`."
    )


class registry_errors(ContextDecorator):  # noqa: N801 - used like a function
    """Turn any `sqlite3.Error` raised inside into `registry_error(err, path)`."""

    def __init__(self, path: str | Path | None = None):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and isinstance(exc, sqlite3.Error):
            raise registry_error(exc, self.path) from None
        return False
