"""The `Registry`: register datasets, charge releases atomically, record refusals and history.

Privacy accounting: a dataset's spend composes the `RunKind.RELEASE` rows, whatever their status
(a charge whose computation failed stays charged), under the dataset's accounting
(`core.privacy.accounting`): `basic` — the sum of their (ε, δ) — or `pld` — the privacy loss
distribution composition of their recorded mechanisms (plus any part of a charge they do not
account for) at the dataset's total δ, never above basic. Every charge composes everything
released plus the request inside the same write transaction. Unregistered runs and seeded demo
runs are recorded but never charged.
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
from core.privacy.accounting import Accounting, Composition, composition, losses_of, warm
from core.privacy.composition import ChargedRelease
from core.privacy.cost import Cost, check_budget
from core.privacy.mechanisms import Mechanism, PrivacyLoss
from core.privacy.recorded import from_json
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
from core.registry.shares import ShareStore, check_analyst
from core.registry.storage import ArtefactStore, asked_to_keep_demos, encode, keeps
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


class Registry(
    ReleaseReader, PlanStore, StrandedRuns, SchemaStore, BudgetHistory, ShareStore, ArtefactStore
):
    """One registry database. Every public method is one short transaction; any SQLite error
    becomes a `RegistryError` (an `InputError`: one line, exit 2) that says what to do.
    `keep_demo_artefacts` (default: `$DPX_KEEP_DEMO_ARTEFACTS`) keeps seeded demo runs'
    artefact bodies, which are otherwise not kept (`core.registry.storage`)."""

    def __init__(
        self, directory: str | Path | None = None, keep_demo_artefacts: bool | None = None
    ):
        self.directory = Path(directory).expanduser() if directory else default_directory()
        self.keep_demo_artefacts = (
            asked_to_keep_demos() if keep_demo_artefacts is None else keep_demo_artefacts
        )
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
        accounting: Accounting | str = Accounting.BASIC,
    ) -> Dataset:
        """Register `name` with its files fingerprinted now (SHA-256 of their bytes) and each
        table's declared public facts: `schemas[table]` if given (its columns must be the
        file's, exactly; labelled a proposal in the history when its source is INFERRED), else
        proposed from what the file declares (`relation.propose`). Stored as DECLARED.
        `accounting` (the owner's choice, recorded) says how its releases compose."""
        if not _NAME.match(name or ""):
            raise InputError(
                f"dataset name '{name}' is not allowed. Fix: letters, digits, '_', '-', '.' "
                "(at most 64, starting with a letter or digit)."
            )
        if uid and row_is_unit:
            raise InputError("give --uid COL or --row-is-unit, not both.")
        accounting = _accounting(accounting)
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
                "max_delta_per_query, uid, teaching, created, row_is_unit, publishable, "
                "accounting) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
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
                    accounting.value,
                ),
            )
            con.execute(
                "INSERT INTO accounting_changes(time, dataset, before, after) VALUES (?,?,?,?)",
                (created, name, None, accounting.value),
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
            accounting,
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
            "max_delta_per_query, uid, teaching, created, row_is_unit, publishable, accounting "
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
            accounting=Accounting(row[10]),
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
        """What `name` has spent under its accounting: (composed ε, Σδ of its approximate-DP
        claims) — under basic, (Σε, Σδ). Under pld the ε holds at the dataset's total δ."""
        spent = self.composition(name).spent
        return spent.epsilon, spent.delta

    def composition(self, name: str, accounting: Accounting | str | None = None) -> Composition:
        """Everything `name` has released, composed under `accounting` (default: the
        dataset's own) at its total δ."""
        d = self.dataset(name)
        if (accounting or d.accounting) is not Accounting.BASIC:
            warm()
        with self._guard():
            return self._composition(self._con, d, accounting=accounting)

    def _composition(
        self,
        con: sqlite3.Connection,
        d: Dataset,
        extra: Iterable[PrivacyLoss] = (),
        delta_total: float | None = None,
        accounting: Accounting | str | None = None,
    ) -> Composition:
        """`d`'s charged releases (+ `extra`, a request) composed under `accounting` (default
        the dataset's) at `delta_total` (default its total δ). Reads inside `con`'s
        transaction: the charge composes what is committed when it holds the write lock."""
        accounting = Accounting(accounting or d.accounting)
        delta_total = d.policy.delta_total if delta_total is None else delta_total
        if accounting is Accounting.BASIC:
            eps, delta = self._spent(con, d.name)
            losses = [PrivacyLoss.of_cost(Cost(eps, min(delta, 1 - 1e-300)))]
        else:
            losses = [x for r in self._charged_releases(con, d.name) for x in r.losses]
        return composition([*losses, *extra], delta_total, accounting)

    def charged_releases(self, name: str) -> list[ChargedRelease]:
        """`name`'s charged releases in release order, as the accountant composes them: each
        one's charged (ε, δ) and the loss profiles of its recorded mechanisms (public facts
        only) — what `core.privacy.composition.cumulative` draws release by release."""
        self.dataset(name)  # a one-line InputError for an unknown name
        with self._guard():
            return self._charged_releases(self._con, name)

    @staticmethod
    def _charged_releases(con: sqlite3.Connection, name: str) -> list[ChargedRelease]:
        rows = con.execute(
            "SELECT id, epsilon, delta, mechanisms FROM releases WHERE dataset=? AND kind=? "
            "ORDER BY id",
            (name, RunKind.RELEASE.value),
        ).fetchall()
        out = []
        for rid, eps, delta, mechs in rows:
            charged = Cost(eps, min(delta, 1 - 1e-300))
            mechanisms = [from_json(m) for m in json.loads(mechs or "[]")]
            out.append(ChargedRelease(int(rid), charged, tuple(losses_of(mechanisms, charged))))
        return out

    @staticmethod
    def _spent(con: sqlite3.Connection, name: str) -> tuple[float, float]:
        """Basic composition: (Σε, Σδ) of the charged releases."""
        row = con.execute(
            "SELECT coalesce(sum(epsilon), 0), coalesce(sum(delta), 0) FROM releases "
            "WHERE dataset=? AND kind=?",
            (name, RunKind.RELEASE.value),
        ).fetchone()
        return float(row[0]), float(row[1])

    def remaining(self, name: str) -> tuple[float, float]:
        """The total minus what is spent under the dataset's accounting (`spent`)."""
        d = self.dataset(name)
        eps, delta = self.spent(name)
        return max(0.0, d.policy.epsilon_total - eps), max(0.0, d.policy.delta_total - delta)

    def set_accounting(self, name: str, accounting: Accounting | str) -> Dataset:
        """The owner's choice of how `name`'s releases compose, recorded. Refused once the
        dataset has a charged release: its spend was checked under the old accounting."""
        accounting = _accounting(accounting)
        d = self.dataset(name)
        with self._write() as con:
            charged = con.execute(
                "SELECT count(*) FROM releases WHERE dataset=? AND kind=?",
                (name, RunKind.RELEASE.value),
            ).fetchone()[0]
            current = con.execute(
                "SELECT accounting FROM datasets WHERE name=?", (name,)
            ).fetchone()[0]
            if current == accounting.value:
                return d
            if charged:
                raise InputError(
                    f"dataset '{name}' already has {charged} charged release(s) under "
                    f"{current} accounting; its accounting cannot be changed after the first "
                    "release. Fix: register the data as a new dataset with --accounting "
                    f"{accounting.value}."
                )
            con.execute("UPDATE datasets SET accounting=? WHERE name=?", (accounting.value, name))
            con.execute(
                "INSERT INTO accounting_changes(time, dataset, before, after) VALUES (?,?,?,?)",
                (now(), name, current, accounting.value),
            )
        return self.dataset(name)

    def accounting_history(self, name: str) -> list[tuple[str, str | None, str]]:
        """(time, before, after) of every accounting choice of `name`, oldest first (the
        registration has before None). Datasets registered before v5 have none (basic)."""
        rows = self._read(
            "SELECT time, before, after FROM accounting_changes WHERE dataset=? ORDER BY id",
            (name,),
        )
        return [(t, b, a) for t, b, a in rows]

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
        analyst: str | None = None,
    ) -> Release:
        """Record a run before any data-dependent work; for a registered dataset, charge it
        (and, for a release by a declared `analyst`, their share: `core.registry.shares`).

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
        analyst = None if analyst is None else check_analyst(analyst)
        seeded = mode == "seeded"
        refusal: str | None = None
        if dataset is not None and not seeded:
            found = self.find(dataset)
            if found is not None and found.accounting is not Accounting.BASIC:
                warm()  # load dp-accounting before the write lock is taken (no-op once loaded)
        with self._write() as con:
            if dataset is None:
                kind = RunKind.DEMO if seeded else RunKind.UNREGISTERED
            else:
                d = self.dataset(dataset)
                kind = RunKind.DEMO if seeded else RunKind.RELEASE
                request = losses_of(planned, cost)
                refusal = self._refusal_reason(con, d, cost.epsilon, cost.delta, seeded, request)
                if refusal is None and not seeded:  # the same transaction: share and dataset
                    refusal = self._share_refusal(con, d.name, analyst, cost.epsilon, cost.delta)
                if refusal is not None:
                    self._insert_refusal(con, tool, dataset, refusal, params)
            if refusal is None:
                cur = con.execute(
                    "INSERT INTO releases(time, tool, dataset, kind, status, params, mechanisms,"
                    " epsilon, delta, mode, privacy, worker, analyst) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
                        analyst,
                    ),
                )
        if refusal is not None:
            raise BudgetExceededError(refusal)
        return self.release(cur.lastrowid)

    def _refusal_reason(
        self, con, d: Dataset, epsilon, delta, seeded, request: Iterable[PrivacyLoss] = ()
    ) -> str | None:
        """Why the request (cost (ε, δ), profiles `request`) is refused, or None. Under basic:
        Σε + ε and Σδ + δ against the totals. Under pld: the composition of everything charged
        plus `request` at the total δ against the totals (the ε the request adds is the
        composed total after minus before); per-query caps always take the request's basic
        (ε, δ). Runs inside the charge's write transaction."""
        if seeded and not d.teaching:
            return (
                f"seeded (demo) noise is refused on registered dataset '{d.name}': it is not "
                "flagged --teaching. Fix: drop --seed (secure noise)."
            )
        if seeded:
            return None  # a labelled demo run on teaching data: recorded, never charged
        p = d.policy
        subject = f"dataset '{d.name}'"
        common = dict(
            cap_source=f"dataset '{d.name}' policy", owner_command=f"dpx dataset budget {d.name}"
        )
        if d.accounting is Accounting.BASIC:
            short = check_budget(
                Cost(epsilon, delta),
                spent=Cost(*self._spent(con, d.name)),
                total=Cost(p.epsilon_total, p.delta_total),
                max_epsilon=p.max_epsilon_per_query,
                max_delta=p.max_delta_per_query,
                subject=subject,
                **common,
            )
            return None if short is None else str(short)
        short = check_budget(
            Cost(epsilon, delta),
            max_epsilon=p.max_epsilon_per_query,
            max_delta=p.max_delta_per_query,
            subject=subject,
            **common,
        )
        if short is not None:
            return str(short)
        request = list(request) or [PrivacyLoss.of_cost(Cost(epsilon, delta))]
        before = self._composition(con, d)
        after = self._composition(con, d, extra=request)
        adds = max(0.0, after.epsilon - before.epsilon)
        # the δ of approximate claims the composed guarantee consumes (less than Σδ when
        # Gaussians compose in zCDP: `Composition.delta_claims`), after minus before
        adds_delta = max(0.0, after.spent.delta - before.spent.delta)
        short = check_budget(
            Cost(adds, adds_delta),
            spent=before.spent,
            total=Cost(p.epsilon_total, p.delta_total),
            subject=f"{subject} (pld accounting: epsilon composed at delta {p.delta_total:g})",
            **common,
        )
        return None if short is None else str(short)

    def attach(
        self, release_id: int, artefact: dict, mechanisms: Iterable[Mechanism] | None = None
    ) -> Release:
        """Attach the computed artefact and the mechanisms that drew its noise to a charged
        run. Their composed cost may not exceed the charge (it may be lower: a release that
        left budget unused keeps its charge). The artefact is stored compressed, and a seeded
        demo run keeps only its hash and size (`core.registry.storage`)."""
        with self._write() as con:
            before = self._release(con, release_id)
            keep = keeps(before.kind, before.tool, self.keep_demo_artefacts)
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
            stored = encode(artefact, keep)
            con.execute(
                "UPDATE releases SET status=?, artefact=?, artefact_sha256=?, artefact_bytes=?, "
                "artefact_note=?, note='' WHERE id=?",
                (
                    Status.RELEASED.value,
                    stored.body,
                    stored.sha256,
                    stored.json_bytes,
                    stored.note,
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


def _accounting(value: Accounting | str) -> Accounting:
    try:
        return Accounting(value)
    except ValueError:
        known = ", ".join(a.value for a in Accounting)
        raise InputError(f"unknown accounting '{value}'. Fix: one of {known}.") from None
