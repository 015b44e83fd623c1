"""One atomic writer for every output file DP Explorer writes (issue 17).

Every file a tool writes for the user (released GeoJSON/CSV and its `.csv.json` sidecar, the
published PP table and its metadata, the SQL exports, reports) goes through `atomic_outputs`:

1. each target gets a temporary file BESIDE it, `.NAME.dpx-PID-RANDOM.part` (same directory,
   so the final rename never crosses a file system), created with mode 0666 so the user's
   umask applies exactly as for a plain `open()` (never 0600);
2. the caller writes the temporaries — whole texts, or streamed in chunks through `open()` so
   that ten million published rows are never built in memory first;
3. on success every temporary is flushed and fsync'ed, then renamed over its target:
   the SECONDARY files (sidecar, metadata) first and the PRIMARY file (the first target) last,
   then the directory is fsync'ed;
4. on any failure (full disk, `/dev/full`, a directory where the file should be, a read-only
   directory, a name that is too long, a path through a file) every temporary is removed and an
   `InputError` with one line is raised: nothing is left behind.

Crash window of a pair (documented, not hidden): a `kill -9` between the two renames of step 3
leaves the new secondary beside the OLD primary (or beside no primary). The renames are
microseconds apart, after all data is on disk; the primary is renamed last so that a primary
never exists without its sidecar. A kill before step 3 leaves only `.dpx-*.part` temporaries:
the next write to the same target removes those whose process is gone (`clean_stale`).

A target that exists and is not a regular file (a directory, a device such as `/dev/full`, a
FIFO) is refused: renaming over it would replace the device node or could never work.

No output may replace what a command reads (issue 29): `Outputs` holds the files a command must
not write — its inputs, every registered dataset's files, the live registry — and refuses an
output that is one of them by resolved path or, when both exist, by (st_dev, st_ino) (symlinks
and hard links). `core.cli.outputs.guard_outputs` fills it from the parsed command line and
checks every output option before anything is read or charged.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from core.errors import InputError

TEMP_INFIX = ".dpx-"
TEMP_SUFFIX = ".part"
NAME_MAX = 255  # bytes in one path component on Linux/macOS file systems
PATH_MAX = 4095  # bytes in a whole path (4096 with the terminating NUL)
_TEMP_OVERHEAD = 48  # "." + ".dpx-" + pid + "-" + 16 hex + ".part", with room to spare


def _temp_stem(name: str) -> str:
    """The name part of a target's temporaries: the name itself, or (when the name is so long
    that the temporary's name would exceed NAME_MAX) a prefix of it plus a digest."""
    if len(name.encode()) + _TEMP_OVERHEAD <= NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return name.encode()[:120].decode(errors="ignore") + "~" + digest


def temp_prefix(target: Path) -> str:
    """Every temporary of `target` starts with this (used to find stale ones)."""
    return f".{_temp_stem(target.name)}{TEMP_INFIX}"


def _new_temp_name(target: Path) -> Path:
    return target.with_name(
        f"{temp_prefix(target)}{os.getpid()}-{secrets.token_hex(8)}{TEMP_SUFFIX}"
    )


ERRNO_FIXES = {
    errno.ENOSPC: "free space on that disk or write elsewhere",
    errno.EDQUOT: "free space within your quota or write elsewhere",
    errno.EACCES: "choose a directory you can write to",
    errno.EPERM: "choose a directory you can write to",
    errno.EROFS: "choose a directory on a writable file system",
    errno.ENAMETOOLONG: f"use a shorter name (at most {NAME_MAX} bytes per name)",
    errno.EISDIR: "name a file, not a directory",
    errno.ENOTDIR: "check the path: one of its parents is a file, not a directory",
    errno.ENOENT: "create the directory first or fix the path",
    errno.EFBIG: "write to a file system that allows larger files",
    errno.EIO: "check the disk, then try again",
}


def write_failure(path: str | Path, err: OSError) -> InputError:
    """The one-line InputError for a failed write of `path`."""
    reason = err.strerror or type(err).__name__
    fix = ERRNO_FIXES.get(err.errno, "choose a writable file path")
    return InputError(f"cannot write {path}: {reason}; nothing was written. Fix: {fix}.")


def check_output_path(path: str | Path, missing_parents: bool = False) -> Path:
    """Refuse, before any work, an output path that cannot be written as a whole file: too long,
    a parent that does not exist (allowed with `missing_parents`: the writer creates them) or is
    not a directory, or an existing target that is a directory, a device or a FIFO. Returns the
    path to write (symlinks resolved)."""
    text = os.fspath(path)
    if not text or "\x00" in text:
        raise InputError("the output path is empty or contains a NUL byte. Fix: name a file.")
    if len(os.fsencode(text)) > PATH_MAX:
        raise InputError(
            f"the output path is {len(os.fsencode(text))} bytes long, above the limit of "
            f"{PATH_MAX}. Fix: use a shorter path."
        )
    target = Path(text)
    long_part = next((p for p in target.parts if len(os.fsencode(p)) > NAME_MAX), None)
    if long_part is not None:
        raise InputError(
            f"a name in the output path is {len(os.fsencode(long_part))} bytes long, above the "
            f"limit of {NAME_MAX}. Fix: use a shorter name."
        )
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    try:
        st = target.stat()
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise write_failure(path, err) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError(f"cannot write {path}: it is a directory. Fix: name a file inside it.")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"cannot write {path}: it exists and is not a regular file (a device, FIFO or "
            "socket), so it cannot be replaced whole. Fix: name a regular file."
        )
    parent = target.parent
    if missing_parents:
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
    elif not parent.exists():
        raise InputError(
            f"cannot write {path}: the directory {parent} does not exist. Fix: create it first."
        )
    if not parent.is_dir():
        raise InputError(f"cannot write {path}: {parent} is not a directory. Fix: fix the path.")
    return target


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process (or an odd number): leave its file alone
    return True


def clean_stale(target: str | Path) -> list[Path]:
    """Remove the temporaries of `target` left by writers that no longer run (a kill -9 during
    a write). A temporary whose process is alive is another writer's: kept. Returns what was
    removed."""
    target = Path(target)
    prefix = temp_prefix(target)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        pid_text = name[len(prefix) :].split("-", 1)[0]
        if pid_text.isdigit() and _pid_alive(int(pid_text)) and int(pid_text) != os.getpid():
            continue
        try:
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


@dataclass
class Staged:
    """One output being written: write to `temp` (by path or through `open()`); the writer
    renames it to `target` when the whole group succeeded."""

    target: Path
    temp: Path
    _handles: list[IO] = field(default_factory=list, repr=False)

    def open(self, mode: str = "w", encoding: str | None = "utf-8", newline: str | None = None):
        """A file object on the temporary (text `w` by default, or `wb`), for streaming."""
        if "b" in mode:
            handle = open(self.temp, mode)  # noqa: SIM115 - closed by the writer
        else:
            handle = open(self.temp, mode, encoding=encoding, newline=newline)  # noqa: SIM115
        self._handles.append(handle)
        return handle

    def write_text(self, text: str, encoding: str = "utf-8") -> None:
        with self.open("w", encoding=encoding, newline="") as fh:
            fh.write(text)

    def write_bytes(self, data: bytes) -> None:
        with self.open("wb") as fh:
            fh.write(data)

    def _close_handles(self) -> None:
        for handle in self._handles:
            if not handle.closed:
                handle.close()  # flushes: a full disk raises here
        self._handles.clear()


def _create_temp(item: Staged) -> None:
    """Create `item.temp` exclusively (a new name on a collision). The caller registers `item`
    BEFORE this runs, so a signal arriving between the file's creation and its registration
    cannot leave an unlisted temporary behind."""
    for _ in range(8):
        try:
            fd = os.open(item.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
        except FileExistsError:
            item.temp = _new_temp_name(item.target)
            continue
        os.close(fd)
        return
    raise FileExistsError(errno.EEXIST, "could not create a unique temporary file")


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the renames are still atomic
    finally:
        os.close(fd)


def _remove(paths: Sequence[Path]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


@contextmanager
def atomic_outputs(*paths: str | Path, make_parents: bool = False) -> Iterator[tuple[Staged, ...]]:
    """Write `paths` together or not at all. The FIRST path is the primary file; the others
    are its companions (sidecar, metadata), which appear before it (see the module doc).

        with atomic_outputs(csv_path, csv_path + ".json") as (table, sidecar):
            with table.open() as fh:
                for chunk in chunks: fh.write(chunk)
            sidecar.write_text(json_text)

    Any `OSError` inside or while committing becomes a one-line `InputError`; any other
    exception removes the temporaries and propagates unchanged. `make_parents` creates missing
    parent directories first (they stay if the write fails)."""
    if not paths:
        raise ValueError("atomic_outputs needs at least one path")
    targets = [check_output_path(p, missing_parents=make_parents) for p in paths]
    if make_parents:
        for path, target in zip(paths, targets, strict=True):
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise write_failure(path, err) from None
    if len({os.path.abspath(t) for t in targets}) != len(targets):
        raise ValueError(f"atomic_outputs got the same path twice: {paths}")
    staged: list[Staged] = []
    current = paths[0]
    try:
        for path, target in zip(paths, targets, strict=True):
            current = path
            clean_stale(target)
            staged.append(Staged(target, _new_temp_name(target)))
            _create_temp(staged[-1])
        current = paths[0]
        yield tuple(staged)
        for path, item in zip(paths, staged, strict=True):
            current = path
            item._close_handles()
            _fsync_file(item.temp)
        renamed: list[Path] = []
        try:
            for path, item in [*zip(paths[1:], staged[1:], strict=True), (paths[0], staged[0])]:
                current = path
                os.replace(item.temp, item.target)
                renamed.append(item.target)
        except BaseException:
            _remove(renamed)  # new companions of a primary that did not appear
            raise
        for directory in {item.target.parent for item in staged}:
            _fsync_directory(directory)
    except OSError as err:
        _discard(staged)
        raise write_failure(current, err) from None
    except BaseException:
        _discard(staged)
        raise


def _discard(staged: Sequence[Staged]) -> None:
    for item in staged:
        with contextlib.suppress(OSError):
            item._close_handles()
    _remove([item.temp for item in staged])


def write_text(path: str | Path, text: str) -> Path:
    """Write one whole text file (UTF-8) atomically; returns the path written."""
    with atomic_outputs(path) as (out,):
        out.write_text(text)
    return out.target


def write_bytes(path: str | Path, data: bytes) -> Path:
    with atomic_outputs(path) as (out,):
        out.write_bytes(data)
    return out.target


def write_texts(primary: tuple[str | Path, str], *companions: tuple[str | Path, str]) -> None:
    """Write a primary text file and its companions (sidecar, metadata) as one pair."""
    items = [primary, *companions]
    with atomic_outputs(*(p for p, _ in items)) as staged:
        for item, (_, text) in zip(staged, items, strict=True):
            item.write_text(text)


WORK_PREFIXES = ("dpx-pp-", "dpx-spill-", "dpx-spark-")  # every `work_directory` prefix
PARENTS_ENV = "DPX_WORK_PARENTS"  # the file listing parents used (default: see parents_file)
MAX_PARENTS = 64  # parents remembered (the most recent); missing ones are forgotten


def parents_file() -> Path:
    """The small file listing the directories other than the temp directory that held work
    directories (`--spill-dir`): `$DPX_WORK_PARENTS`, else `$XDG_CACHE_HOME/dpx/work-parents`
    (`~/.cache/dpx/work-parents`)."""
    env = os.environ.get(PARENTS_ENV)
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "dpx" / "work-parents"


def _recorded_parents() -> list[Path]:
    try:
        lines = parents_file().read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return list(dict.fromkeys(Path(line) for line in lines if line.startswith("/")))


def _remember_parent(where: Path) -> None:
    """Add `where` to the parents file (one line, appended; best effort: a read-only home
    directory only means a killed run's directory there waits for the next run with it)."""
    where = Path(os.path.realpath(where))
    if where == Path(os.path.realpath(tempfile.gettempdir())) or where in _recorded_parents():
        return
    with contextlib.suppress(OSError, ValueError):
        path = parents_file()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{where}\n")


def _stale_in(where: Path, prefixes: Sequence[str]) -> list[Path]:
    """Work directories in `where` named `<prefix><pid>-…` whose process no longer runs and
    that belong to this user (never a live process's, never another user's)."""
    stale = []
    try:
        entries = list(os.scandir(where))
    except OSError:
        return stale
    for entry in entries:
        prefix = next((p for p in prefixes if entry.name.startswith(p)), None)
        if prefix is None:
            continue
        pid_text, dash, _ = entry.name[len(prefix) :].partition("-")  # `<prefix><pid>-<random>`
        if not (dash and pid_text.isdigit()):
            continue  # not named by a process (e.g. an old mkdtemp name): never guessed
        if int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
            stale.append(Path(entry.path))
    return stale


def remove_stale_work_directories() -> list[Path]:
    """Remove the private work directories (`WORK_PREFIXES`) of processes that no longer run (a
    kill -9, a crash), wherever they were put: the temp directory and every parent in the
    parents file. Called once by every `dpx` process and by the app at start. Never raises;
    returns what was removed. Parents that no longer exist are forgotten."""
    removed: list[Path] = []
    try:
        recorded = _recorded_parents()
        places = list(dict.fromkeys([Path(tempfile.gettempdir()), *recorded]))
        for where in places:
            for path in _stale_in(where, WORK_PREFIXES):
                shutil.rmtree(path, ignore_errors=True)
                if not path.exists():
                    removed.append(path)
        kept = [p for p in recorded if p.is_dir()][-MAX_PARENTS:]
        if kept != recorded:
            write_text(parents_file(), "".join(f"{p}\n" for p in kept))
    except Exception:  # noqa: BLE001 - housekeeping must never stop a command or the app
        pass
    return removed


def work_directory(prefix: str, parent: str | Path | None = None) -> tempfile.TemporaryDirectory:
    """A fresh private directory (mode 0700) `<prefix><pid>-…` in `parent` (the system's temp
    directory by default; created if missing) for intermediate data a tool may write — DuckDB's
    spill files, PP's staged rows — removed when it is closed or collected. Directories of the
    same prefix left by processes that no longer run (a kill -9) are removed first: they may
    hold private data. A `parent` other than the temp directory is remembered (`parents_file`)
    so that `remove_stale_work_directories` looks there too, at the start of any later run."""
    where = Path(parent).expanduser() if parent is not None else Path(tempfile.gettempdir())
    where.mkdir(parents=True, exist_ok=True, mode=0o700)
    if parent is not None:
        _remember_parent(where)
    for path in _stale_in(where, (prefix,)):
        shutil.rmtree(path, ignore_errors=True)
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{os.getpid()}-", dir=where)


# --- outputs never overwrite what a command reads (issue 29) ---------------------------------


def file_identity(path: str | Path) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file `path` names (symlinks followed), None when it is absent:
    two names of one file (a hard link, a symlink) share it."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


@dataclass(frozen=True)
class Protected:
    """A file no output may replace: its resolved path, its identity when it exists, and what
    it is (said in the refusal)."""

    path: Path
    identity: tuple[int, int] | None
    what: str

    def same_file(self, target: Path, identity: tuple[int, int] | None) -> bool:
        if identity is not None and self.identity is not None:
            return identity == self.identity
        return target == self.path


@dataclass
class Outputs:
    """The one check that an output path is none of a command's inputs (issue 29): the files it
    reads, a registered dataset's files, the live registry (and its -wal/-shm/-journal).

        guard = Outputs()
        guard.protect(args.input, "INPUT, the table this command reads")
        guard.check("--out", args.out)   # before anything is read or charged

    Paths are compared resolved (symlinks followed) and, when both exist, by (st_dev, st_ino),
    so a hard link or a symlink to an input is refused too."""

    protected: list[Protected] = field(default_factory=list)

    def protect(self, path: str | Path | None, what: str) -> None:
        if path is None or not os.fspath(path):
            return
        resolved = _resolved(path)
        self.protected.append(Protected(resolved, file_identity(resolved), what))

    def protect_registry(self, database: str | Path) -> None:
        """The live registry file and SQLite's companions of it."""
        for suffix in ("", "-wal", "-shm", "-journal"):
            self.protect(f"{os.fspath(database)}{suffix}", "the live registry")

    def clash(self, path: str | Path) -> Protected | None:
        target = _resolved(path)
        identity = file_identity(target)
        return next((p for p in self.protected if p.same_file(target, identity)), None)

    def check(self, flag: str, path: str | Path, written: str | Path | None = None) -> None:
        """Refuse (InputError, one line) writing `written` (default: `path`, the name given
        with `flag`) over a protected file."""
        hit = self.clash(path if written is None else written)
        if hit is None:
            return
        also = "" if written is None or Path(written) == Path(path) else f" (it writes {written})"
        raise InputError(
            f"{flag} {path}{also} is {hit.what}: writing the output there would destroy it. "
            "Nothing was read or charged. Fix: write the output to another file."
        )


def _resolved(path: str | Path) -> Path:
    try:
        return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))
    except (OSError, ValueError):
        return Path(os.path.abspath(os.fspath(path)))
