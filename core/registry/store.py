"""The registry's SQLite file: location, connection settings and versioned schema migrations.

Why SQLite: it ships with Python, is one file, and its write-ahead log plus `BEGIN IMMEDIATE`
give exactly what charging needs — one writer at a time across processes, readers never
blocked, and a committed transaction survives a crash of the process (`synchronous=FULL`
also survives a power loss). DuckDB is built for analytics and allows one writing process at
a time per file, which would make concurrent `dpx` processes fail instead of queueing.

Safety of the file (issue 17). The registry holds the spent budgets, so it is never silently
re-created: `connect` refuses a file that exists but is empty, is not SQLite, fails SQLite's
`PRAGMA quick_check`, or carries no DP Explorer schema (`PRAGMA application_id` = APPLICATION_ID,
or — registries made before the marker — the schema_version/datasets/releases tables). A new
registry is built in a temporary file and linked into place whole, so no process ever sees a
half-made one. Every SQLite failure becomes a `RegistryError` with one line saying what happened
and what to do (`registry_errors`). `backup` copies the registry with SQLite's online backup
(consistent while others write); `restore` copies a backup back (see the README).
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from core.errors import InputError
from core.files import atomic_outputs, clean_stale, temp_prefix, write_failure
from core.registry.dberrors import (
    RegistryError,
    is_disk_full,
    registry_error,
    registry_errors,
)
from core.registry.migrations import APPLICATION_ID, MIGRATIONS, migrate, schema_version
from core.registry.restores import (
    Restored,
    accounts,
    carry_over,
    entries,
    giving_back,
    record,
    refusal,
)

__all__ = [
    "APPLICATION_ID",
    "FILE_NAME",
    "MIGRATIONS",
    "schema_version",
    "migrate",
    "RegistryError",
    "backup",
    "check_registry",
    "connect",
    "registry_errors",
    "restore",
]

FILE_NAME = "registry.sqlite"
ENV_VAR = "DPX_REGISTRY"
BUSY_TIMEOUT_MS = 30_000  # a writer waits at most this long for another one's transaction
_SCHEMA_TABLES = {"schema_version", "datasets", "releases"}
RESTORE_HINT = "dpx dataset restore BACKUP --force"
ALLOW_SPEND_DECREASE = "--allow-spend-decrease"  # the flag that lets a restore lower a spend


def default_directory() -> Path:
    """`$DPX_REGISTRY` if set, else `~/.dpx`."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / ".dpx"


def _configure(con: sqlite3.Connection) -> sqlite3.Connection:
    con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = FULL")
    con.execute("PRAGMA foreign_keys = ON")
    return con


def _refuse_file(path: Path, what: str) -> RegistryError:
    return RegistryError(
        f"the registry {path} {what}; it was left untouched (it may hold spent budgets). "
        f"Fix: restore a backup with `{RESTORE_HINT} --registry {path.parent}`, or use "
        "another --registry DIR."
    )


def check_registry(con: sqlite3.Connection, path: Path) -> None:
    """Refuse a database that fails `PRAGMA quick_check` or is not a DP Explorer registry."""
    problems = [row[0] for row in con.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        raise _refuse_file(path, f"is damaged (integrity check: {'; '.join(problems)})")
    app_id = con.execute("PRAGMA application_id").fetchone()[0]
    if app_id == APPLICATION_ID:
        return
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if app_id != 0 or not tables >= _SCHEMA_TABLES:
        raise _refuse_file(path, "is an SQLite file but not a DP Explorer registry")


def _create(path: Path) -> None:
    """Create a new registry whole: schema built in a temporary file, then linked into place
    (another process creating it at the same time wins; both then open the same file)."""
    for sidecar in ("-wal", "-journal"):
        if path.with_name(path.name + sidecar).exists():
            raise _refuse_file(
                path, f"is missing but its {sidecar[1:]} file remains (a partial delete or copy)"
            )
    clean_stale(path)
    temp = path.with_name(f"{temp_prefix(path)}{os.getpid()}-{os.urandom(8).hex()}.part")
    try:
        con = sqlite3.connect(temp, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode = MEMORY")  # no journal file beside the temporary
            migrate(con)
        finally:
            con.close()
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, path)
        except FileExistsError:
            pass  # created meanwhile by another process: use theirs
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def _existing_file_problem(path: Path) -> str | None:
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_size == 0:
        wal = path.with_name(path.name + "-wal")
        if not (wal.exists() and wal.stat().st_size > 0):
            return "is empty (zero bytes: a failed copy or restore?)"
    return None


def connect(directory: Path) -> sqlite3.Connection:
    """Open the registry database in `directory`, creating it on first use (never re-creating
    an existing file), checked (`check_registry`) and migrated. Raises `RegistryError`."""
    path = directory / FILE_NAME
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            with registry_errors(path):
                _create(path)
        problem = _existing_file_problem(path)
    except OSError as err:
        raise RegistryError(
            f"cannot open the registry in {directory}: {err.strerror or err}. Fix: pass a "
            f"writable directory with --registry DIR or set {ENV_VAR}."
        ) from None
    if problem is not None:
        raise _refuse_file(path, problem)
    with registry_errors(path):
        _check_read_only(path)  # a damaged file is refused before anything could write to it
        con = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            _configure(con)
            migrate(con)
        except BaseException:
            con.close()
            raise
    return con


def _check_read_only(path: Path) -> None:
    """`check_registry` through a read-only connection (closing it never checkpoints)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    con = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        check_registry(con, path)
    finally:
        con.close()


def backup(directory: Path, dest: str | Path) -> Path:
    """Copy the registry in `directory` to the file `dest` with SQLite's online backup: a
    consistent snapshot even while other processes charge. Written atomically (temporary file,
    fsync, rename); the copy is checked before it appears. Returns the path written."""
    source = connect(directory)
    try:
        with atomic_outputs(dest) as (out,):
            copy = sqlite3.connect(out.temp, isolation_level=None)
            try:
                copy.execute("PRAGMA journal_mode = MEMORY")
                source.backup(copy)
                copy.execute("PRAGMA journal_mode = DELETE")  # a plain file, no WAL beside it
                check_registry(copy, Path(dest))
            except sqlite3.Error as err:
                if is_disk_full(err):
                    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    raise write_failure(dest, full) from None
                raise registry_error(err, directory / FILE_NAME) from None
            finally:
                copy.close()
    finally:
        source.close()
    return out.target


def _counts(con: sqlite3.Connection) -> tuple[int, int]:
    return (
        con.execute("SELECT count(*) FROM datasets").fetchone()[0],
        con.execute("SELECT count(*) FROM releases").fetchone()[0],
    )


def restore(
    backup_file: str | Path,
    directory: Path,
    force: bool = False,
    allow_spend_decrease: bool = False,
) -> Restored:
    """Replace the registry in `directory` by the backup `backup_file` (checked first), and
    record the restore in the restored registry's budget history (`core.registry.restores`).

    Refuses to overwrite a registry holding datasets or releases, or a damaged one, without
    `force` (an empty, zero-byte file is replaced without it); refuses, without
    `allow_spend_decrease`, a restore that would lower a dataset's spent (ε, δ) (budget given
    back), naming each such dataset and how much. A healthy registry is overwritten through
    SQLite's backup API (other connections see the old or the new content, never a mix); a
    damaged one is first moved aside to `registry.sqlite.damaged-TIME` (with its -wal/-shm
    files) and never deleted (its spend cannot be read: the entries say so). Stop every
    running `dpx` and app first: a process that was charging during a restore loses its row."""
    src_path = Path(backup_file)
    if not src_path.is_file():
        raise InputError(f"the backup {src_path} is not a file. Fix: name a backup file.")
    path = directory / FILE_NAME
    sha256 = _sha256(src_path)
    with registry_errors(src_path):
        src = sqlite3.connect(f"file:{quote(str(src_path.resolve()))}?mode=ro", uri=True)
        try:
            check_registry(src, src_path)
            after = accounts(src)
            aside = None
            try:
                target = connect(directory)
            except RegistryError:
                empty = path.is_file() and path.stat().st_size == 0
                if not (force or empty):
                    raise RegistryError(
                        f"the registry {path} is damaged or unreadable; restoring will move it "
                        f"aside (never delete it). Fix: add --force to restore {src_path}."
                    ) from None
                aside = _move_aside(path)
                target = connect(directory)
            try:
                datasets, releases = _counts(target)
                if (datasets or releases) and not force:
                    raise InputError(
                        f"the registry {path} holds {datasets} datasets and {releases} "
                        f"releases; restoring {src_path} would replace them. Fix: stop every "
                        "running dpx, then add --force."
                    )
                before = None if aside is not None else accounts(target)
                note = (
                    "" if aside is None else f"the registry replaced was unreadable ({aside.name})"
                )
                changes = entries(before, after, src_path.name, sha256, now(), note)
                back = giving_back(changes)
                if back and not allow_spend_decrease:
                    raise InputError(refusal(back, src_path.name, ALLOW_SPEND_DECREASE))
                _staged_copy(src, target, path, changes)
            finally:
                target.close()
        finally:
            src.close()
    return Restored(path, sha256, tuple(changes), aside)


def _staged_copy(src, target, path: Path, changes) -> None:
    """Copy the backup `src` into a temporary file beside the registry, migrate it, add the
    restore entries (and the replaced registry's earlier ones), then copy it over `target`
    in one SQLite backup: the restored content and its record arrive together."""
    temp = path.with_name(f"{temp_prefix(path)}{os.getpid()}-{os.urandom(8).hex()}.part")
    try:
        stage = sqlite3.connect(temp, isolation_level=None)
        try:
            stage.execute("PRAGMA journal_mode = MEMORY")
            src.backup(stage)
            migrate(stage)
            carry_over(target, stage)
            record(stage, list(changes))
            stage.backup(target)
        finally:
            stage.close()
    finally:
        temp.unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError as err:
        raise InputError(
            f"cannot read the backup {path}: {err.strerror or err}. Fix: name a readable file."
        ) from None
    return digest.hexdigest()


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            os.replace(part, aside.with_name(aside.name + suffix))
    return aside


def now() -> str:
    """The time of a registry row: UTC, ISO 8601, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")
