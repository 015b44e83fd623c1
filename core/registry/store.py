"""The registry's SQLite file: location, connection settings and versioned schema migrations.

Why SQLite: it ships with Python, is one file, and its write-ahead log plus `BEGIN IMMEDIATE`
give exactly what charging needs — one writer at a time across processes, readers never
blocked, and a committed transaction survives a crash of the process (`synchronous=FULL`
also survives a power loss). DuckDB is built for analytics and allows one writing process at
a time per file, which would make concurrent `dpx` processes fail instead of queueing.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.errors import InputError

FILE_NAME = "registry.sqlite"
ENV_VAR = "DPX_REGISTRY"
BUSY_TIMEOUT_MS = 30_000  # a writer waits at most this long for another one's transaction


class RegistryError(InputError):
    """The registry database could not be read or written (damaged file, full disk, ...)."""


@contextmanager
def guarded(directory: Path) -> Iterator[None]:
    """Turn any `sqlite3.Error` into one line that says what happened and what to do."""
    try:
        yield
    except sqlite3.Error as err:
        raise RegistryError(sqlite_message(err, directory)) from None


def sqlite_message(err: sqlite3.Error, directory: Path) -> str:
    text = str(err).lower()
    where = directory / FILE_NAME
    if "full" in text:
        return (
            f"the registry could not be written: the disk holding {where} is full. Fix: free "
            "space there and run the command again (`dpx dataset reconcile NAME` completes "
            "a release that was charged but not recorded)."
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return (
            f"the registry database {where} is damaged ({err}). Fix: restore it from a backup "
            "(`dpx dataset backup` makes one); nothing was charged by this command."
        )
    if "readonly" in text or "read-only" in text:
        return f"the registry {where} is read-only. Fix: make it writable or use --registry DIR."
    if "locked" in text or "busy" in text:
        return f"the registry {where} is busy (another process holds it). Fix: try again."
    return f"the registry {where} failed: {err}. Fix: check the file, or restore a backup."


def default_directory() -> Path:
    """`$DPX_REGISTRY` if set, else `~/.dpx`."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".dpx"


def _run_script(con: sqlite3.Connection, script: str) -> None:
    """Run `;`-separated DDL inside the caller's transaction (`executescript` would commit)."""
    for statement in script.split(";"):
        if statement.strip():
            con.execute(statement)


def _v1(con: sqlite3.Connection) -> None:
    _run_script(
        con,
        """
        CREATE TABLE datasets (
            name TEXT PRIMARY KEY,
            epsilon_total REAL NOT NULL,
            delta_total REAL NOT NULL,
            max_epsilon_per_query REAL,
            max_delta_per_query REAL,
            uid TEXT,
            teaching INTEGER NOT NULL DEFAULT 0,
            created TEXT NOT NULL
        );
        CREATE TABLE table_files (
            dataset TEXT NOT NULL REFERENCES datasets(name),
            name TEXT NOT NULL,
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            public INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (dataset, name)
        );
        CREATE TABLE releases (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            tool TEXT NOT NULL,
            dataset TEXT REFERENCES datasets(name),
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            params TEXT NOT NULL,
            mechanisms TEXT NOT NULL,
            epsilon REAL NOT NULL,
            delta REAL NOT NULL,
            mode TEXT NOT NULL,
            privacy TEXT NOT NULL DEFAULT '{}',
            artefact_sha256 TEXT,
            artefact TEXT,
            note TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX releases_by_dataset ON releases(dataset, kind);
        CREATE TABLE refusals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            tool TEXT NOT NULL,
            dataset TEXT,
            reason TEXT NOT NULL,
            params TEXT NOT NULL
        );
        CREATE TABLE budget_changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            dataset TEXT NOT NULL REFERENCES datasets(name),
            epsilon_before REAL NOT NULL,
            epsilon_after REAL NOT NULL,
            delta_before REAL NOT NULL,
            delta_after REAL NOT NULL
        );
        """,
    )


def _v2(con: sqlite3.Connection) -> None:
    """Datasets state their unit (`row_is_unit`) and PP's publishable columns; a release
    records the process that charged it (to list charges never delivered); location
    histograms are one tool, "location", with the method as a parameter."""
    _run_script(
        con,
        """
        ALTER TABLE datasets ADD COLUMN row_is_unit INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE datasets ADD COLUMN publishable TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE releases ADD COLUMN worker TEXT NOT NULL DEFAULT '';
        UPDATE releases SET params = json_set(params, '$.method', tool), tool = 'location'
            WHERE tool NOT IN ('sql', 'pp', 'location');
        UPDATE refusals SET params = json_set(params, '$.method', tool), tool = 'location'
            WHERE tool NOT IN ('sql', 'pp', 'location')
        """,
    )


# Ordered migrations: MIGRATIONS[i] brings the schema from version i to version i + 1.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1, _v2)


def schema_version(con: sqlite3.Connection) -> int:
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(con: sqlite3.Connection) -> None:
    """Apply the missing migrations, each in its own immediate transaction."""
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY)")
    while True:
        con.execute("BEGIN IMMEDIATE")
        try:
            version = schema_version(con)
            if version > len(MIGRATIONS):
                raise InputError(
                    f"the registry's schema version {version} is newer than this dpx "
                    f"understands ({len(MIGRATIONS)}). Fix: upgrade DP Explorer."
                )
            if version == len(MIGRATIONS):
                con.execute("COMMIT")
                return
            MIGRATIONS[version](con)
            con.execute("INSERT INTO schema_version(version) VALUES (?)", (version + 1,))
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise


def connect(directory: Path) -> sqlite3.Connection:
    """Open (creating on first use) the registry database in `directory`, migrated."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(
            directory / FILE_NAME, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None
        )
        con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        con.execute("PRAGMA journal_mode = WAL")
        con.execute("PRAGMA synchronous = FULL")
        con.execute("PRAGMA foreign_keys = ON")
        migrate(con)
    except (OSError, sqlite3.Error) as err:
        raise InputError(
            f"cannot open the registry in {directory}: {err}. Fix: pass a writable directory "
            f"with --registry DIR or set {ENV_VAR}."
        ) from None
    return con
