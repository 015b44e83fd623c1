"""How a release's artefact is stored, what the registry keeps, its size and its pruning (issue 29).

Stored compactly. An artefact is stored as its JSON compressed with zlib (level 1) in a BLOB that
starts with `HEADER`; `decode` returns the same dict as before, and rows written before (JSON
text) still read. `artefact_sha256` stays the SHA-256 of the canonical JSON (sorted keys, no
whitespace), whatever the storage: a published artefact's hash never changes. `artefact_bytes`
is the size of that canonical JSON.

Kept by need. A seeded demo run's artefact body is not kept: nothing reads it back (demo runs
are never charged, the CLI and the pages show a run's result from the computation itself, and
an analyst never runs seeded) except a report, which says "not kept: demo run". Its record stays
whole — ids, parameters, mechanisms, the artefact's SHA-256 and size. Two exceptions keep it:
the planning tools' artefacts (`KEPT_TOOLS`: a pilot is read back by `--pilot-release`), and a
registry asked to keep them (`DPX_KEEP_DEMO_ARTEFACTS=1`).

Pruned by policy. `prune` drops the artefact bodies of demo and unregistered runs older than an
age (never a registered release's: its record and its charge are untouched), keeps every row,
records the prune in `prunes` and VACUUMs the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from core.errors import InputError
from core.registry.models import RunKind
from core.registry.store import FILE_NAME, now

HEADER = b"DPXZ1\n"  # a compressed artefact: zlib of its JSON follows
LEVEL = 1  # 1M-leaf location artefact: 0.29 of its JSON in 1.4 s; level 6: 0.25 in 6.4 s
KEEP_DEMO_VAR = "DPX_KEEP_DEMO_ARTEFACTS"
KEPT_TOOLS = frozenset({"pilot", "bounds"})  # planning inputs read back by later plans
NOT_KEPT_DEMO = "not kept: demo run"
PRUNABLE = (RunKind.DEMO, RunKind.UNREGISTERED)  # never RunKind.RELEASE
_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def canonical_json(artefact: dict) -> bytes:
    """The artefact's canonical JSON (sorted keys, no whitespace): what its SHA-256 hashes."""
    text = json.dumps(artefact, sort_keys=True, separators=(",", ":"), default=str)
    return text.encode()


def artefact_sha256(artefact: dict) -> str:
    """SHA-256 of the artefact's canonical JSON (sorted keys, no whitespace)."""
    return hashlib.sha256(canonical_json(artefact)).hexdigest()


@dataclass(frozen=True)
class Encoded:
    """An artefact ready to store: the body (None when not kept), its hash and JSON size."""

    body: bytes | None
    sha256: str
    json_bytes: int
    note: str = ""  # why the body is not kept ("" when it is)


def encode(artefact: dict, keep: bool = True) -> Encoded:
    """Hash the canonical JSON and, when kept, compress the JSON (the dict's own key order, so
    readers see the keys as written) behind `HEADER`."""
    canonical = canonical_json(artefact)
    sha = hashlib.sha256(canonical).hexdigest()
    if not keep:
        return Encoded(None, sha, len(canonical), NOT_KEPT_DEMO)
    text = json.dumps(artefact, separators=(",", ":"), default=str).encode()
    return Encoded(HEADER + zlib.compress(text, LEVEL), sha, len(canonical))


def decode(stored: bytes | str | None) -> dict | None:
    """The artefact dict of a stored body: compressed (`HEADER`) or JSON text (older rows)."""
    if stored is None:
        return None
    if isinstance(stored, bytes | memoryview):
        data = bytes(stored)
        if data.startswith(HEADER):
            return json.loads(zlib.decompress(data[len(HEADER) :]))
        return json.loads(data)
    return json.loads(stored)


def keeps(kind: RunKind, tool: str, asked: bool) -> bool:
    """Whether a run's artefact body is stored: always, except a demo run's (unless asked, or
    a planning tool's artefact that later plans read back)."""
    return kind is not RunKind.DEMO or asked or str(tool) in KEPT_TOOLS


def asked_to_keep_demos() -> bool:
    return os.environ.get(KEEP_DEMO_VAR, "").strip().lower() in ("1", "true", "yes")


def parse_age(text: str) -> timedelta:
    """'7d', '12h', '30m', '45s', '2w' -> a timedelta; anything else is a one-line InputError."""
    match = _AGE.match(str(text))
    if not match:
        raise InputError(
            f"--older-than must be a number and a unit (s, m, h, d, w), got '{text}'. "
            "Fix: e.g. --older-than 7d."
        )
    return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2)])


@dataclass(frozen=True)
class KindUsage:
    """The stored artefacts of one kind of run."""

    kind: str
    runs: int
    bodies: int  # artefact bodies stored
    stored_bytes: int  # bytes of those bodies as stored
    json_bytes: int  # their canonical JSON size (what uncompressed storage would take)
    not_kept: int  # runs with an artefact hash but no body (demo, or pruned)

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class StorageInfo:
    """The registry's size: its files on disk and the stored artefacts by kind."""

    path: str
    file_bytes: int  # the database file plus its write-ahead log
    kinds: tuple[KindUsage, ...]
    prunes: int

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "file_bytes": self.file_bytes,
            "kinds": [k.to_json() for k in self.kinds],
            "prunes": self.prunes,
        }


@dataclass(frozen=True)
class Pruned:
    """One prune: the bodies dropped, and the file size before and after (VACUUM)."""

    time: str
    older_than: str
    runs: tuple[int, ...]
    stored_bytes: int
    file_bytes_before: int
    file_bytes_after: int

    def to_json(self) -> dict:
        return {**self.__dict__, "runs": list(self.runs)}


class ArtefactStore:
    """`storage_info` and `prune` (a mixin of `Registry`: uses `_write`, `_read`, `_guard`,
    `_con`, `directory`)."""

    def file_bytes(self) -> int:
        path = self.directory / FILE_NAME
        return sum(
            p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists()
        )

    def storage_info(self) -> StorageInfo:
        rows = self._read(
            "SELECT kind, count(*), count(artefact), "
            "coalesce(sum(length(CAST(artefact AS BLOB))), 0), "
            "coalesce(sum(CASE WHEN artefact IS NOT NULL THEN coalesce(artefact_bytes, "
            "length(CAST(artefact AS BLOB))) END), 0), "
            "sum(artefact IS NULL AND artefact_sha256 IS NOT NULL) "
            "FROM releases GROUP BY kind"
        )
        by_kind = {r[0]: r for r in rows}
        kinds = tuple(
            KindUsage(k.value, *(int(v or 0) for v in by_kind.get(k.value, (k, 0, 0, 0, 0, 0))[1:]))
            for k in RunKind
        )
        prunes = self._read("SELECT count(*) FROM prunes")[0][0]
        return StorageInfo(str(self.directory / FILE_NAME), self.file_bytes(), kinds, prunes)

    def prune(self, older_than: str) -> Pruned:
        """Drop the artefact bodies of demo and unregistered runs recorded more than
        `older_than` ('7d') ago. Every row stays (ids, costs, hashes, mechanisms); registered
        releases are never touched. Recorded in `prunes`; the file is VACUUMed."""
        age = parse_age(older_than)
        cutoff = (datetime.now(UTC) - age).isoformat(timespec="seconds")
        before = self.file_bytes()
        time = now()
        kinds = [k.value for k in PRUNABLE]
        where = f"kind IN ({', '.join('?' for _ in kinds)}) AND artefact IS NOT NULL AND time <= ?"
        with self._write() as con:
            found = con.execute(
                f"SELECT id, length(CAST(artefact AS BLOB)) FROM releases WHERE {where} "
                "ORDER BY id",
                (*kinds, cutoff),
            ).fetchall()
            con.execute(
                "UPDATE releases SET artefact_bytes = coalesce(artefact_bytes, "
                "length(CAST(artefact AS BLOB))), artefact = NULL, artefact_note = ? "
                f"WHERE {where}",
                (f"not kept: pruned {time} (older than {older_than.strip()})", *kinds, cutoff),
            )
            freed = sum(int(n or 0) for _, n in found)
            con.execute(
                "INSERT INTO prunes(time, older_than, kinds, runs, stored_bytes) "
                "VALUES (?,?,?,?,?)",
                (time, older_than.strip(), json.dumps(kinds), len(found), freed),
            )
        with self._guard():
            self._con.execute("VACUUM")
            self._con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return Pruned(
            time, older_than.strip(), tuple(int(i) for i, _ in found), freed, before,
            self.file_bytes(),
        )  # fmt: skip
