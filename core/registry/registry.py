"""The `Registry`: register datasets, charge releases atomically, record refusals and history.

Privacy accounting: basic composition. A dataset's spent (ε, δ) is the sum of the (ε, δ) of its
`RunKind.RELEASE` rows, whatever their status (a charge whose computation failed stays
charged). Unregistered runs and seeded demo runs are recorded but never charged.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from core.errors import BudgetExceededError, InputError
from core.registry.models import (
    BudgetChange,
    Dataset,
    Mechanism,
    Policy,
    Refusal,
    Release,
    RunKind,
    Status,
    TableFile,
)
from core.registry.store import connect, default_directory

_TOLERANCE = 1e-9  # float slack when comparing sums of ε to a total (0.1 + 0.2 vs 0.3)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def artefact_sha256(artefact: dict) -> str:
    """SHA-256 of the artefact's canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps(artefact, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Registry:
    """One registry database. Every public method is one short transaction."""

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory).expanduser() if directory else default_directory()
        self._con = connect(self.directory)

    def close(self) -> None:
        self._con.close()

    @contextmanager
    def _write(self):
        """An immediate (write-locked) transaction: committed as a whole or not at all."""
        self._con.execute("BEGIN IMMEDIATE")
        try:
            yield self._con
        except BaseException:
            self._con.execute("ROLLBACK")
            raise
        self._con.execute("COMMIT")

    # -- datasets -----------------------------------------------------------------------
    def add_dataset(
        self,
        name: str,
        tables: Iterable[tuple[str, str | Path]],
        policy: Policy,
        public: Iterable[tuple[str, str | Path]] = (),
        uid: str | None = None,
        teaching: bool = False,
    ) -> Dataset:
        """Register `name` with its files fingerprinted now (SHA-256 of their bytes)."""
        if not _NAME.match(name or ""):
            raise InputError(
                f"dataset name '{name}' is not allowed. Fix: letters, digits, '_', '-', '.' "
                "(at most 64, starting with a letter or digit)."
            )
        files = [*((t, p, False) for t, p in tables), *((t, p, True) for t, p in public)]
        if not any(not is_public for _, _, is_public in files):
            raise InputError("a dataset needs at least one --table NAME=FILE.")
        names = [t for t, _, _ in files]
        if len(set(names)) != len(names):
            raise InputError(f"table names must be distinct, got {names}.")
        table_files = []
        for tname, path, is_public in files:
            p = Path(path).expanduser().resolve()
            if not p.is_file():
                raise InputError(f"file not found: {path} (table '{tname}').")
            table_files.append(TableFile(tname, str(p), file_sha256(p), is_public))
        created = _now()
        with self._write() as con:
            if con.execute("SELECT 1 FROM datasets WHERE name=?", (name,)).fetchone():
                raise InputError(
                    f"dataset '{name}' is already registered. Fix: choose another name "
                    f"(a registered dataset's budget is changed with `dpx dataset budget`)."
                )
            con.execute(
                "INSERT INTO datasets VALUES (?,?,?,?,?,?,?,?)",
                (
                    name,
                    policy.epsilon_total,
                    policy.delta_total,
                    policy.max_epsilon_per_query,
                    policy.max_delta_per_query,
                    uid,
                    int(teaching),
                    created,
                ),
            )
            con.executemany(
                "INSERT INTO table_files VALUES (?,?,?,?,?)",
                [(name, t.name, t.path, t.sha256, int(t.public)) for t in table_files],
            )
        return Dataset(name, tuple(table_files), policy, uid, teaching, created)

    def find(self, name: str) -> Dataset | None:
        row = self._con.execute("SELECT * FROM datasets WHERE name=?", (name,)).fetchone()
        if row is None:
            return None
        files = self._con.execute(
            "SELECT name, path, sha256, public FROM table_files WHERE dataset=? ORDER BY rowid",
            (name,),
        ).fetchall()
        return Dataset(
            name=row[0],
            tables=tuple(TableFile(n, p, s, bool(pub)) for n, p, s, pub in files),
            policy=Policy(row[1], row[2], row[3], row[4]),
            uid=row[5],
            teaching=bool(row[6]),
            created=row[7],
        )

    def dataset(self, name: str) -> Dataset:
        found = self.find(name)
        if found is None:
            known = ", ".join(d.name for d in self.datasets()) or "none"
            raise InputError(
                f"no registered dataset '{name}' in {self.directory} (registered: {known}). "
                "Fix: `dpx dataset add NAME --table T=FILE --epsilon E` or check --registry."
            )
        return found

    def datasets(self) -> list[Dataset]:
        names = [r[0] for r in self._con.execute("SELECT name FROM datasets ORDER BY name")]
        return [self.dataset(n) for n in names]

    def verify_files(self, dataset: Dataset) -> None:
        """Refuse (InputError) if any registered file is missing or its bytes changed."""
        for t in dataset.tables:
            p = Path(t.path)
            if not p.is_file():
                raise InputError(
                    f"table '{t.name}' of dataset '{dataset.name}' is missing: {t.path}. "
                    "Fix: restore the file, or register the new data as a new dataset."
                )
            if file_sha256(p) != t.sha256:
                raise InputError(
                    f"table '{t.name}' of dataset '{dataset.name}' changed since registration "
                    f"({t.path}: SHA-256 differs). Refused: its budget covered the old bytes. "
                    "Fix: restore the file, or register the new data as a new dataset."
                )

    def spent(self, name: str) -> tuple[float, float]:
        return self._spent(self._con, name)

    @staticmethod
    def _spent(con: sqlite3.Connection, name: str) -> tuple[float, float]:
        row = con.execute(
            "SELECT coalesce(sum(epsilon), 0), coalesce(sum(delta), 0) FROM releases "
            "WHERE dataset=? AND kind=?",
            (name, RunKind.RELEASE.value),
        ).fetchone()
        return float(row[0]), float(row[1])

    def remaining(self, name: str) -> tuple[float, float]:
        d = self.dataset(name)
        eps, delta = self.spent(name)
        return max(0.0, d.policy.epsilon_total - eps), max(0.0, d.policy.delta_total - delta)

    def set_budget(
        self, name: str, epsilon: float | None = None, delta: float | None = None
    ) -> BudgetChange:
        """Set a dataset's total (ε, δ), recorded in its history. A total below what is
        already spent is refused: there is no reset."""
        with self._write() as con:
            d = self.dataset(name)
            new = Policy(
                d.policy.epsilon_total if epsilon is None else epsilon,
                d.policy.delta_total if delta is None else delta,
                d.policy.max_epsilon_per_query,
                d.policy.max_delta_per_query,
            )
            eps_spent, delta_spent = self._spent(con, name)
            if new.epsilon_total < eps_spent - _TOLERANCE or new.delta_total < delta_spent - 1e-15:
                raise InputError(
                    f"dataset '{name}' has already spent epsilon {eps_spent:g}, delta "
                    f"{delta_spent:g}; a total below that is refused (there is no reset)."
                )
            time = _now()
            cur = con.execute(
                "INSERT INTO budget_changes(time, dataset, epsilon_before, epsilon_after, "
                "delta_before, delta_after) VALUES (?,?,?,?,?,?)",
                (
                    time,
                    name,
                    d.policy.epsilon_total,
                    new.epsilon_total,
                    d.policy.delta_total,
                    new.delta_total,
                ),
            )
            con.execute(
                "UPDATE datasets SET epsilon_total=?, delta_total=? WHERE name=?",
                (new.epsilon_total, new.delta_total, name),
            )
        return BudgetChange(
            cur.lastrowid,
            time,
            name,
            d.policy.epsilon_total,
            new.epsilon_total,
            d.policy.delta_total,
            new.delta_total,
        )

    def budget_history(self, name: str) -> list[BudgetChange]:
        rows = self._con.execute(
            "SELECT * FROM budget_changes WHERE dataset=? ORDER BY id", (name,)
        ).fetchall()
        return [BudgetChange(*r) for r in rows]

    # -- charging -----------------------------------------------------------------------
    def refuse(self, tool: str, dataset: str | None, reason: str, params: dict) -> Refusal:
        """Record a refusal (nothing computed, nothing charged)."""
        with self._write() as con:
            return self._insert_refusal(con, tool, dataset, reason, params)

    @staticmethod
    def _insert_refusal(con, tool, dataset, reason, params) -> Refusal:
        time = _now()
        cur = con.execute(
            "INSERT INTO refusals(time, tool, dataset, reason, params) VALUES (?,?,?,?,?)",
            (time, tool, dataset, reason, json.dumps(params, default=str)),
        )
        return Refusal(cur.lastrowid, time, tool, dataset, reason, params)

    def charge(
        self,
        tool: str,
        dataset: str | None,
        params: dict,
        mechanisms: Iterable[Mechanism],
        mode: str,
        privacy: dict | None = None,
    ) -> Release:
        """Record a run before any data-dependent work; for a registered dataset, charge it.

        One immediate transaction re-reads the dataset's spend, checks the per-query caps and
        the remaining budget, and writes the charge — so concurrent processes serialise here
        and can never overspend. A refused request is recorded as a `Refusal` (charging
        nothing) and raised as `BudgetExceededError` (caps and budget) or `InputError`.
        """
        mechanisms = tuple(mechanisms)
        epsilon = float(sum(m.epsilon for m in mechanisms))
        delta = float(sum(m.delta for m in mechanisms))
        seeded = mode == "seeded"
        refusal: str | None = None
        with self._write() as con:
            if dataset is None:
                kind = RunKind.DEMO if seeded else RunKind.UNREGISTERED
            else:
                d = self.dataset(dataset)
                kind = RunKind.DEMO if seeded else RunKind.RELEASE
                refusal = self._refusal_reason(con, d, epsilon, delta, seeded)
                if refusal is not None:
                    self._insert_refusal(con, tool, dataset, refusal, params)
            if refusal is None:
                time = _now()
                cur = con.execute(
                    "INSERT INTO releases(time, tool, dataset, kind, status, params, mechanisms,"
                    " epsilon, delta, mode, privacy) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        time,
                        tool,
                        dataset,
                        kind.value,
                        Status.CHARGED.value,
                        json.dumps(params, default=str),
                        json.dumps([asdict(m) for m in mechanisms]),
                        epsilon,
                        delta,
                        mode,
                        json.dumps(privacy or {}),
                    ),
                )
        if refusal is not None:
            raise BudgetExceededError(refusal)
        return self.release(cur.lastrowid)

    def _refusal_reason(self, con, d: Dataset, epsilon, delta, seeded) -> str | None:
        if seeded and not d.teaching:
            return (
                f"seeded (demo) noise is refused on registered dataset '{d.name}': it is not "
                "flagged --teaching. Fix: drop --seed (secure noise)."
            )
        if seeded:
            return None  # a labelled demo run on teaching data: recorded, never charged
        p = d.policy
        eps_spent, delta_spent = self._spent(con, d.name)
        eps_left = max(0.0, p.epsilon_total - eps_spent)
        delta_left = max(0.0, p.delta_total - delta_spent)
        left = f"remaining epsilon {eps_left:g} of {p.epsilon_total:g}, delta {delta_left:g} of {p.delta_total:g}"
        if p.max_epsilon_per_query is not None and epsilon > p.max_epsilon_per_query * (1 + 1e-12):
            return (
                f"this request needs epsilon {epsilon:g}, above dataset '{d.name}''s per-query "
                f"cap {p.max_epsilon_per_query:g} ({left}). Nothing was charged."
            )
        if p.max_delta_per_query is not None and delta > p.max_delta_per_query * (1 + 1e-12):
            return (
                f"this request needs delta {delta:g}, above dataset '{d.name}''s per-query "
                f"cap {p.max_delta_per_query:g} ({left}). Nothing was charged."
            )
        if epsilon > eps_left + _TOLERANCE or delta > delta_left + 1e-15:
            return (
                f"privacy budget of dataset '{d.name}' exceeded: this request needs epsilon "
                f"{epsilon:g}, delta {delta:g}; {left}. Nothing was charged."
            )
        return None

    def attach(
        self, release_id: int, artefact: dict, mechanisms: Iterable[Mechanism] | None = None
    ) -> Release:
        """Attach the computed artefact (and, optionally, the detailed mechanism rows, whose
        ε must add up to the charge) to a charged run."""
        with self._write() as con:
            before = self.release(release_id)
            if mechanisms is not None:
                mechanisms = tuple(mechanisms)
                total = sum(m.epsilon for m in mechanisms)
                if abs(total - before.epsilon) > 1e-6 * max(1.0, before.epsilon):
                    raise ValueError(
                        f"mechanism rows add up to epsilon {total}, charged {before.epsilon}"
                    )
                con.execute(
                    "UPDATE releases SET mechanisms=? WHERE id=?",
                    (json.dumps([asdict(m) for m in mechanisms]), release_id),
                )
            con.execute(
                "UPDATE releases SET status=?, artefact=?, artefact_sha256=? WHERE id=?",
                (
                    Status.RELEASED.value,
                    json.dumps(artefact, default=str),
                    artefact_sha256(artefact),
                    release_id,
                ),
            )
        return self.release(release_id)

    def fail(self, release_id: int, note: str) -> None:
        """Mark a charged run whose computation failed; its charge stays."""
        with self._write() as con:
            con.execute(
                "UPDATE releases SET status=?, note=? WHERE id=?",
                (Status.FAILED.value, note, release_id),
            )

    # -- reading ------------------------------------------------------------------------
    _RELEASE_COLUMNS = (
        "id, time, tool, dataset, kind, status, params, mechanisms, epsilon, delta, mode, "
        "artefact_sha256, artefact, note, privacy"
    )

    @staticmethod
    def _release_from(row) -> Release:
        return Release(
            id=row[0],
            time=row[1],
            tool=row[2],
            dataset=row[3],
            kind=RunKind(row[4]),
            status=Status(row[5]),
            params=json.loads(row[6]),
            mechanisms=tuple(Mechanism(**m) for m in json.loads(row[7])),
            epsilon=row[8],
            delta=row[9],
            mode=row[10],
            artefact_sha256=row[11],
            artefact=None if row[12] is None else json.loads(row[12]),
            note=row[13],
            privacy=json.loads(row[14]),
        )

    def release(self, release_id: int) -> Release:
        row = self._con.execute(
            f"SELECT {self._RELEASE_COLUMNS} FROM releases WHERE id=?", (int(release_id),)
        ).fetchone()
        if row is None:
            raise InputError(f"no release with id {release_id} in {self.directory}.")
        return self._release_from(row)

    def releases(self, dataset: str | None = None, kind: RunKind | None = None) -> list[Release]:
        sql = f"SELECT {self._RELEASE_COLUMNS} FROM releases WHERE 1=1"
        args: list = []
        if dataset is not None:
            sql += " AND dataset=?"
            args.append(dataset)
        if kind is not None:
            sql += " AND kind=?"
            args.append(kind.value)
        return [self._release_from(r) for r in self._con.execute(sql + " ORDER BY id", args)]

    def refusals(self, dataset: str | None = None) -> list[Refusal]:
        sql, args = "SELECT * FROM refusals", ()
        if dataset is not None:
            sql, args = sql + " WHERE dataset=?", (dataset,)
        return [
            Refusal(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]))
            for r in self._con.execute(sql + " ORDER BY id", args)
        ]
