"""Uploaded files, kept once on the server's disk by content, within a quota and a lifetime.

An upload is written once, to `<registry>/app-uploads/<sha256>` (mode 0600 in a 0700
directory; `$DPX_APP_UPLOADS` overrides the place), and every session that uploads the same
bytes shares that one file: a session keeps only (name, digest, size). The loaders read the
file from there (`ui.data`), so neither the bytes nor a pickled copy of them sit in a session.

Bounds (stated where uploads are offered, `quota_caption`):

* the size is checked BEFORE anything is read or stored (`MAX_UPLOAD_BYTES`, the uploader's
  own limit): a refused file leaves nothing on disk;
* `QUOTA_BYTES` (2 GiB) for all stored uploads together: storing a new one first evicts the
  least recently used ones (a use = an upload or a page run that reads it), so the oldest
  sessions' files go first and the total never exceeds the quota;
* `LIFETIME_S` (24 h after the last use): long enough for a reload, a server restart or an
  overnight break, short enough that private rows an owner uploaded for a look do not sit on
  the server for days (the session store keeps its small state 48 h; a session older than a day
  says its file is gone and asks for it again).

Writers in several server processes are serialised by a lock file (fcntl); a write is a
temporary beside the target renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.data.loading import MAX_UPLOAD_BYTES, MIB, too_large
from core.errors import InputError
from core.registry.store import default_directory

ENV_VAR = "DPX_APP_UPLOADS"
QUOTA_BYTES = 2 * 1024**3  # all stored uploads together
LIFETIME_S = 24 * 3600  # after the last use
CHUNK = 1024 * 1024
_BLOB = re.compile(r"^[0-9a-f]{64}$")
_PART = ".part-"
_LOCK = threading.Lock()


@dataclass(frozen=True)
class StoredUpload:
    """One uploaded file as a session keeps it: its name, the SHA-256 of its bytes, its size."""

    name: str
    digest: str
    size: int

    @property
    def path(self) -> Path:
        return uploads_root() / self.digest

    def exists(self) -> bool:
        return self.path.is_file()


def uploads_root() -> Path:
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else default_directory() / "app-uploads"


def quota_caption() -> str:
    return (
        f"Files up to {MAX_UPLOAD_BYTES // MIB} MB each. The server keeps uploads "
        f"{LIFETIME_S // 3600} hours after their last use, {QUOTA_BYTES // 1024**3} GB for all "
        "sessions together (the least recently used go first); nothing is sent elsewhere."
    )


def check_size(name: str, size: int) -> None:
    """Refuse (one line) a file over the upload limit, from its size alone."""
    limit = min(MAX_UPLOAD_BYTES, QUOTA_BYTES)
    if size > limit:
        raise InputError(too_large(name, size, limit) + " Nothing was stored.")


def store(name: str, data: memoryview | bytes, size: int | None = None) -> StoredUpload:
    """Keep `data` (an upload's buffer, not copied) as `uploads_root()/<sha256>`; refuse it
    first if it is too large. An identical file already stored is only marked used."""
    size = len(data) if size is None else size
    check_size(name, size)
    view = memoryview(data)
    digest = hashlib.sha256()
    for start in range(0, len(view), CHUNK):
        digest.update(view[start : start + CHUNK])
    kept = StoredUpload(name, digest.hexdigest(), len(view))
    with _locked() as root:
        if kept.path.is_file():
            touch(kept)
            return kept
        make_room(root, len(view))
        tmp = root / f"{_PART}{os.getpid()}-{secrets.token_hex(6)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                for start in range(0, len(view), CHUNK):
                    fh.write(view[start : start + CHUNK])
            os.replace(tmp, kept.path)
        except OSError as err:
            tmp.unlink(missing_ok=True)
            raise InputError(
                f"{name} could not be kept on the server ({err.strerror or err}). Nothing was "
                "stored. Fix: try again later, or pick a demo or a registered dataset."
            ) from None
    return kept


def touch(kept: StoredUpload) -> None:
    """Mark a stored upload used now (its lifetime and its place in the eviction order)."""
    with contextlib.suppress(OSError):
        os.utime(kept.path)


def make_room(root: Path, incoming: int, now: float | None = None) -> list[Path]:
    """Remove expired uploads, then the least recently used until `incoming` more bytes fit in
    `QUOTA_BYTES`; also a dead writer's temporaries. Returns what was removed."""
    now = time.time() if now is None else now
    removed = []
    blobs = []
    for entry in _entries(root):
        if entry.name.startswith(_PART):
            pid = entry.name[len(_PART) :].split("-", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                removed += _unlink(Path(entry.path))
            continue
        if not _BLOB.match(entry.name):
            continue
        with contextlib.suppress(OSError):
            st = entry.stat()
            blobs.append((st.st_mtime, st.st_size, Path(entry.path)))
    blobs.sort()  # oldest use first
    total = sum(size for _, size, _ in blobs)
    for mtime, size, path in blobs:
        if now - mtime > LIFETIME_S or total + incoming > QUOTA_BYTES:
            removed += _unlink(path)
            total -= size
    return removed


def remove_expired() -> list[Path]:
    """Remove uploads unused for `LIFETIME_S` (the app calls it at start)."""
    root = uploads_root()
    if not root.is_dir():
        return []
    with _locked() as root:
        return make_room(root, 0)


def stored_bytes() -> int:
    return sum(e.stat().st_size for e in _entries(uploads_root()) if _BLOB.match(e.name))


@contextlib.contextmanager
def _locked() -> Iterator[Path]:
    root = uploads_root()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(root, 0o700)
    with _LOCK, open(root / ".lock", "a") as fh:  # noqa: PTH123
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield root
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _entries(root: Path) -> list[os.DirEntry]:
    try:
        return [e for e in os.scandir(root) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _unlink(path: Path) -> list[Path]:
    try:
        path.unlink()
    except OSError:
        return []
    return [path]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
