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
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from pathlib import Path

from core.data.declared import SchemaSource, TableSchema
from core.errors import BudgetExceededError, InputError
from core.privacy.cost import Cost, check_budget
from core.privacy.mechanisms import Mechanism
from core.registry.budgets import BudgetHistory
from core.registry.models import (
    Claim,
    Dataset,
    Policy,
    Refusal,
    Release,
    RunKind,
    Status,
    TableFile,
)
from core.registry.plans import PlanStore
from core.registry.reading import ReleaseReader
from core.registry.schemas import (
    REGISTERED_DECLARED,
    REGISTERED_PROPOSED,
    SchemaStore,
    schemas_for,
)
from core.registry.store import FILE_NAME, connect, default_directory, now, registry_errors
from core.registry.stranded import WORKER, StrandedRuns

_TOLERANCE = 1e-9  # float slack when comparing sums of ε to a total (0.1 + 0.2 vs 0.3)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


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


class Registry(ReleaseReader, PlanStore, StrandedRuns, SchemaStore, BudgetHistory):
    """One registry database. Every public method is one short transaction; any SQLite error
    becomes a `RegistryError` (an `InputError`: one line, exit 2) that says what to do."""

    def __init__(self, directory: str | Path | None = None):
        self.directory = Path(directory).expanduser() if directory else default_directory()
        self._con = connect(self.directory)

    def close(self) -> None:
        self._con.close()

    def _guard(self):
        return registry_errors(self.directory / FILE_NAME)

    @contextmanager
    def _write(self):
        """An immediate (write-locked) transaction: committed as a whole or not at all."""
        with self._guard():
            self._con.execute("BEGIN IMMEDIATE")
            try:
                yield self._con
            except BaseException:
                if self._con.in_transaction:
                    self._con.execute("ROLLBACK")
                raise
            self._con.execute("COMMIT")

    def _read(self, sql: str, args=()) -> list:
        with self._guard():
            return self._con.execute(sql, args).fetchall()

    # -- datasets -----------------------------------------------------------------------
    def add_dataset(
        self,
        name: str,
        tables: Iterable[tuple[str, str | Path]],
        policy: Policy,
        public: Iterable[tuple[str, str | Path]] = (),
        uid: str | None = None,
        teaching: bool = False,
        row_is_unit: bool = False,
        publishable: Iterable[str] = (),
        schemas: Mapping[str, TableSchema] | None = None,
    ) -> Dataset:
        """Register `name` with its files fingerprinted now (SHA-256 of their bytes) and each
        table's declared public facts: `schemas[table]` if given (its columns must be the
        file's, exactly; labelled a proposal in the history when its source is INFERRED), else
        proposed from what the file declares (`relation.propose`). Stored as DECLARED."""
        if not _NAME.match(name or ""):
            raise InputError(
                f"dataset name '{name}' is not allowed. Fix: letters, digits, '_', '-', '.' "
                "(at most 64, starting with a letter or digit)."
            )
        if uid and row_is_unit:
            raise InputError("give --uid COL or --row-is-unit, not both.")
        publishable = tuple(dict.fromkeys(publishable))
        if uid and uid in publishable:
            raise InputError(
                f"the unit column '{uid}' can never be published beside a PP release. "
                "Fix: remove it from --pp-columns."
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
        declared = schemas_for([(t.name, t.path) for t in table_files], schemas)
        given = {t for t, v in (schemas or {}).items() if v.source is SchemaSource.DECLARED}
        created = now()
        with self._write() as con:
            if con.execute("SELECT 1 FROM datasets WHERE name=?", (name,)).fetchone():
                raise InputError(
                    f"dataset '{name}' is already registered. Fix: choose another name "
                    f"(a registered dataset's budget is changed with `dpx dataset budget`)."
                )
            con.execute(
                "INSERT INTO datasets(name, epsilon_total, delta_total, max_epsilon_per_query, "
                "max_delta_per_query, uid, teaching, created, row_is_unit, publishable) "
                "VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    name,
                    policy.epsilon_total,
                    policy.delta_total,
                    policy.max_epsilon_per_query,
                    policy.max_delta_per_query,
                    uid,
                    int(teaching),
                    created,
                    int(row_is_unit),
                    json.dumps(list(publishable)),
                ),
            )
            con.executemany(
                "INSERT INTO table_files VALUES (?,?,?,?,?)",
                [(name, t.name, t.path, t.sha256, int(t.public)) for t in table_files],
            )
            for table, schema in declared.items():
                note = REGISTERED_DECLARED if table in given else REGISTERED_PROPOSED
                self._insert_schemas(con, name, {table: schema}, created, note)
        return Dataset(
            name,
            tuple(table_files),
            policy,
            uid,
            teaching,
            created,
            row_is_unit,
            publishable,
            declared,
        )

    def set_publishable(self, name: str, columns: Iterable[str]) -> Dataset:
        """The owner's decision: the columns PP may publish unchanged beside the perturbed
        sensitive attribute (recorded on the dataset; the unit column never)."""
        columns = tuple(dict.fromkeys(c.strip() for c in columns if c.strip()))
        d = self.dataset(name)
        if d.uid and d.uid in columns:
            raise InputError(
                f"the unit column '{d.uid}' of dataset '{name}' can never be published. "
                "Fix: leave it out of --pp-columns."
            )
        with self._write() as con:
            con.execute(
                "UPDATE datasets SET publishable=? WHERE name=?", (json.dumps(list(columns)), name)
            )
        return self.dataset(name)

    def find(self, name: str) -> Dataset | None:
        rows = self._read(
            "SELECT name, epsilon_total, delta_total, max_epsilon_per_query, "
            "max_delta_per_query, uid, teaching, created, row_is_unit, publishable "
            "FROM datasets WHERE name=?",
            (name,),
        )
        if not rows:
            return None
        row = rows[0]
        files = self._read(
            "SELECT name, path, sha256, public FROM table_files WHERE dataset=? ORDER BY rowid",
            (name,),
        )
        return Dataset(
            name=row[0],
            tables=tuple(TableFile(n, p, s, bool(pub)) for n, p, s, pub in files),
            policy=Policy(row[1], row[2], row[3], row[4]),
            uid=row[5],
            teaching=bool(row[6]),
            created=row[7],
            row_is_unit=bool(row[8]),
            publishable=tuple(json.loads(row[9] or "[]")),
            schemas=self._stored_schemas(name),
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
        names = [r[0] for r in self._read("SELECT name FROM datasets ORDER BY name")]
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
        with self._guard():
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

    # -- charging -----------------------------------------------------------------------
    def refuse(self, tool: str, dataset: str | None, reason: str, params: dict) -> Refusal:
        """Record a refusal (nothing computed, nothing charged)."""
        with self._write() as con:
            return self._insert_refusal(con, tool, dataset, reason, params)

    @staticmethod
    def _insert_refusal(con, tool, dataset, reason, params) -> Refusal:
        time = now()
        cur = con.execute(
            "INSERT INTO refusals(time, tool, dataset, reason, params) VALUES (?,?,?,?,?)",
            (time, str(tool), dataset, reason, json.dumps(params, default=str)),
        )
        return Refusal(cur.lastrowid, time, str(tool), dataset, reason, params)

    def charge(
        self,
        tool: str,
        dataset: str | None,
        params: dict,
        cost: Cost | Iterable[Mechanism],
        mode: str,
        privacy: Claim | dict | None = None,
    ) -> Release:
        """Record a run before any data-dependent work; for a registered dataset, charge it.

        `cost` is the release's planned (ε, δ) — derived by the caller from the mechanism
        objects that will draw (or given as those objects, which are then its first rows).
        One immediate transaction re-reads the dataset's spend, checks the per-query caps and
        the remaining budget, and writes the charge — so concurrent processes serialise here
        and can never overspend. A refused request is recorded as a `Refusal` (charging
        nothing) and raised as `BudgetExceededError`.
        """
        planned: tuple[Mechanism, ...] = ()
        if not isinstance(cost, Cost):
            planned = tuple(cost)
            cost = Cost(
                sum(m.cost.epsilon for m in planned if not m.in_place_of),
                min(sum(m.cost.delta for m in planned if not m.in_place_of), 1 - 1e-300),
            )
        claim = privacy.to_json() if isinstance(privacy, Claim) else dict(privacy or {})
        seeded = mode == "seeded"
        refusal: str | None = None
        with self._write() as con:
            if dataset is None:
                kind = RunKind.DEMO if seeded else RunKind.UNREGISTERED
            else:
                d = self.dataset(dataset)
                kind = RunKind.DEMO if seeded else RunKind.RELEASE
                refusal = self._refusal_reason(con, d, cost.epsilon, cost.delta, seeded)
                if refusal is not None:
                    self._insert_refusal(con, tool, dataset, refusal, params)
            if refusal is None:
                cur = con.execute(
                    "INSERT INTO releases(time, tool, dataset, kind, status, params, mechanisms,"
                    " epsilon, delta, mode, privacy, worker) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        now(),
                        str(tool),
                        dataset,
                        kind.value,
                        Status.CHARGED.value,
                        json.dumps(params, default=str),
                        json.dumps([m.to_json() for m in planned], default=str),
                        cost.epsilon,
                        cost.delta,
                        mode,
                        json.dumps(claim, default=str),
                        WORKER,
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
        short = check_budget(
            Cost(epsilon, delta),
            spent=Cost(*self._spent(con, d.name)),
            total=Cost(p.epsilon_total, p.delta_total),
            max_epsilon=p.max_epsilon_per_query,
            max_delta=p.max_delta_per_query,
            subject=f"dataset '{d.name}'",
            cap_source=f"dataset '{d.name}' policy",
            owner_command=f"dpx dataset budget {d.name}",
        )
        return None if short is None else str(short)

    def attach(
        self, release_id: int, artefact: dict, mechanisms: Iterable[Mechanism] | None = None
    ) -> Release:
        """Attach the computed artefact and the mechanisms that drew its noise to a charged
        run. Their composed cost may not exceed the charge (it may be lower: a release that
        left budget unused keeps its charge)."""
        with self._write() as con:
            before = self._release(con, release_id)
            if mechanisms is not None:
                mechanisms = tuple(mechanisms)
                eps = sum(m.cost.epsilon for m in mechanisms if not m.in_place_of)
                delta = sum(m.cost.delta for m in mechanisms if not m.in_place_of)
                if eps > before.epsilon * (1 + 1e-9) + 1e-12 or delta > before.delta + 1e-15:
                    raise ValueError(
                        f"the mechanisms that drew cost epsilon {eps}, delta {delta}; release "
                        f"#{release_id} was charged epsilon {before.epsilon}, delta {before.delta}"
                    )
                con.execute(
                    "UPDATE releases SET mechanisms=? WHERE id=?",
                    (json.dumps([m.to_json() for m in mechanisms], default=str), release_id),
                )
            con.execute(
                "UPDATE releases SET status=?, artefact=?, artefact_sha256=?, note='' WHERE id=?",
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
        self._set_status(release_id, Status.FAILED, note)

    def mark_undelivered(self, release_id: int, note: str) -> None:
        """Mark a run that was computed but whose artefact could not be recorded."""
        self._set_status(release_id, Status.UNDELIVERED, note)

    def _set_status(self, release_id: int, status: Status, note: str) -> None:
        with self._write() as con:
            con.execute(
                "UPDATE releases SET status=?, note=? WHERE id=?",
                (status.value, note, release_id),
            )
