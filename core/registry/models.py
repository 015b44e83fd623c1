"""Typed records of the registry: datasets, their files and policy, releases and refusals.

A release's mechanism rows are the `core.privacy` mechanism objects that drew its noise (read
back with `core.privacy.from_json`), so a report or a command reads the same typed objects the
tool drew with — their cost, sensitivity, scale and accuracy — never a re-parsed label.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

from core.data.declared import TableSchema
from core.errors import InputError
from core.privacy.accounting import Accounting
from core.privacy.mechanisms import Mechanism as PrivacyMechanism
from core.privacy.recorded import Recorded
from core.privacy.unit import PrivacyUnit


class RunKind(StrEnum):
    """What a recorded run counts as."""

    RELEASE = "release"  # a registered dataset, charged against its budget
    UNREGISTERED = "unregistered"  # files given directly by the owner; recorded, not limited
    DEMO = "demo"  # seeded noise: labelled, never counted as a release


class Tool(StrEnum):
    """The three capabilities whose runs the registry records."""

    LOCATION = "location"  # location histograms (the method is a parameter)
    SQL = "sql"
    PP = "pp"


class Status(StrEnum):
    """Where a charged run stands."""

    CHARGED = "charged"  # charged, computation under way (or the process died: the charge stays)
    RELEASED = "released"  # computed; the artefact is attached
    FAILED = "failed"  # the computation failed after the charge; the charge stays
    # computed (an output may have been written) but the registry could not record the
    # artefact; `note` says why. `dpx dataset reconcile` completes or closes it; the charge stays
    UNDELIVERED = "undelivered"


@dataclass(frozen=True)
class TableFile:
    """One file of a dataset, fingerprinted by the SHA-256 of its bytes at registration."""

    name: str
    path: str
    sha256: str
    public: bool = False


@dataclass(frozen=True)
class Policy:
    """A dataset's total (ε, δ) budget and optional per-query caps."""

    epsilon_total: float
    delta_total: float = 0.0
    max_epsilon_per_query: float | None = None
    max_delta_per_query: float | None = None

    def __post_init__(self):
        if not (math.isfinite(self.epsilon_total) and self.epsilon_total > 0):
            raise InputError(f"--epsilon must be a finite number > 0, got {self.epsilon_total}.")
        if not 0 <= self.delta_total < 1:
            raise InputError(f"--delta must be in [0, 1), got {self.delta_total}.")
        cap_e, cap_d = self.max_epsilon_per_query, self.max_delta_per_query
        if cap_e is not None and not (math.isfinite(cap_e) and cap_e > 0):
            raise InputError(f"--max-epsilon-per-query must be a finite number > 0, got {cap_e}.")
        if cap_d is not None and not 0 <= cap_d < 1:
            raise InputError(f"--max-delta-per-query must be in [0, 1), got {cap_d}.")


@dataclass(frozen=True)
class Dataset:
    """A registered dataset. Its privacy unit is `uid` (the column saying whose rows or points
    they are) or, with `row_is_unit`, one row (a row id is added when it is read).
    `publishable` lists the columns the owner allows PP to publish unchanged beside the
    perturbed sensitive attribute (never the unit column)."""

    name: str
    tables: tuple[TableFile, ...]
    policy: Policy
    uid: str | None = None
    teaching: bool = False
    created: str = ""
    row_is_unit: bool = False
    publishable: tuple[str, ...] = ()
    # {table name: its declared public facts}, stored in the registry (issue 27). Empty for a
    # table registered before schemas were stored (registry v3 or older): `schema(t)` is None
    # and the consumer proposes one from the file, labelled inferred.
    schemas: dict[str, TableSchema] = field(default_factory=dict, hash=False)
    # how its releases compose (chosen by the owner at registration; fixed after a release)
    accounting: Accounting = Accounting.BASIC

    def schema(self, table: str) -> TableSchema | None:
        """The declared schema of `table` (its registered name), or None when none is stored."""
        return self.schemas.get(table)

    @property
    def unit(self) -> PrivacyUnit:
        """The privacy unit the owner declared for this dataset."""
        return PrivacyUnit.declared(self.uid, self.row_is_unit)

    @property
    def unit_words(self) -> str:
        return self.unit.words()

    @property
    def private_tables(self) -> tuple[TableFile, ...]:
        return tuple(t for t in self.tables if not t.public)

    @property
    def public_tables(self) -> tuple[TableFile, ...]:
        return tuple(t for t in self.tables if t.public)


def Mechanism(  # noqa: N802 - transitional constructor of a recorded row
    kind: str,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float | None = None,
    scale: float | None = None,
) -> Recorded:
    """A mechanism row stated by hand (older callers); new code records the `core.privacy`
    objects that drew instead."""
    return Recorded(kind, epsilon=epsilon, delta=delta, sensitivity=sensitivity, scale=scale)


@dataclass(frozen=True)
class Claim:
    """What a release claims: the unit it protects, in words and by column, and its model."""

    unit: str
    unit_column: str | None = None
    rho1: str | None = None  # PP's (ρ1, ρ2)-privacy, as exact fractions "a/b"
    rho2: str | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def of(cls, unit: PrivacyUnit) -> Claim:
        """The claim of a release protecting `unit`, in the unit's own words."""
        return cls(unit.words(), unit.column)

    @classmethod
    def from_json(cls, data: dict | None) -> Claim:
        data = data or {}
        return cls(
            unit=str(data.get("unit") or "not recorded"),
            unit_column=data.get("unit_column"),
            rho1=None if data.get("rho1") is None else str(data["rho1"]),
            rho2=None if data.get("rho2") is None else str(data["rho2"]),
        )


@dataclass(frozen=True)
class Release:
    """One recorded run. For `RunKind.RELEASE` the ε/δ are charged to `dataset`."""

    id: int
    time: str
    tool: str
    dataset: str | None
    kind: RunKind
    status: Status
    params: dict
    mechanisms: tuple[PrivacyMechanism, ...]
    epsilon: float
    delta: float
    mode: str
    artefact_sha256: str | None = None
    artefact: dict | None = None
    note: str = ""
    privacy: dict = field(default_factory=dict)  # a `Claim` as JSON (see `claim`)
    worker: str = ""  # host:pid of the process that charged it (to find stranded charges)
    # the size of the artefact's canonical JSON (None before registry v7), and why its body is
    # not kept ("" when kept or never attached): "not kept: demo run", or a prune
    artefact_bytes: int | None = None
    artefact_note: str = ""
    body_kept: bool = False  # a body is stored (read or not: `releases(bodies=False)`)

    @property
    def claim(self) -> Claim:
        return Claim.from_json(self.privacy)

    @property
    def method(self) -> str | None:
        """The location-histogram method of a `Tool.LOCATION` run (None for other tools)."""
        return self.params.get("method") if self.tool == Tool.LOCATION else None

    @property
    def title(self) -> str:
        """The tool, and the method for a location histogram: "location · ug"."""
        return f"{self.tool} · {self.method}" if self.method else str(self.tool)

    @property
    def charged(self) -> bool:
        """True when this run counts against its dataset's budget."""
        return self.kind is RunKind.RELEASE

    def summary(self) -> dict:
        return {
            "id": self.id,
            "tool": self.tool,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "time": self.time,
            "mode": self.mode,
            "kind": self.kind.value,
            "status": self.status.value,
        }


@dataclass(frozen=True)
class Refusal:
    """A request refused before anything was computed; it charges nothing."""

    id: int
    time: str
    tool: str
    dataset: str | None
    reason: str
    params: dict


class ChangeKind(StrEnum):
    """What changed a dataset's budget account."""

    TOTAL = "total"  # `dpx dataset budget`: the total (ε, δ) was set
    RESTORE = "restore"  # `dpx dataset restore`: the registry was replaced by a backup


@dataclass(frozen=True)
class BudgetChange:
    """One entry of a dataset's budget history: a `dpx dataset budget` command (the totals
    before and after) or a restore (`kind` RESTORE). A restore entry also names the backup
    file and its SHA-256 and gives the spent (ε, δ) of the registry it replaced
    (`spent_before`) and of the backup (`spent_after`); a side where the dataset did not exist
    (or the replaced registry could not be read) is None, and its totals are 0."""

    id: int
    time: str
    dataset: str
    epsilon_before: float
    epsilon_after: float
    delta_before: float
    delta_after: float
    kind: ChangeKind = ChangeKind.TOTAL
    backup: str = ""
    backup_sha256: str = ""
    spent_before: tuple[float, float] | None = None
    spent_after: tuple[float, float] | None = None
    note: str = ""

    @property
    def spend_returned(self) -> tuple[float, float]:
        """The (ε, δ) a restore gave back (spent before minus after; 0 when it rose)."""
        before = self.spent_before or (0.0, 0.0)
        after = self.spent_after or (0.0, 0.0)
        return max(0.0, before[0] - after[0]), max(0.0, before[1] - after[1])

    def to_json(self) -> dict:
        out = {
            "kind": self.kind.value,
            "time": self.time,
            "epsilon_before": self.epsilon_before,
            "epsilon_after": self.epsilon_after,
            "delta_before": self.delta_before,
            "delta_after": self.delta_after,
        }
        if self.kind is ChangeKind.RESTORE:
            out |= {
                "backup": self.backup,
                "backup_sha256": self.backup_sha256,
                "spent_before": None if self.spent_before is None else list(self.spent_before),
                "spent_after": None if self.spent_after is None else list(self.spent_after),
                "note": self.note,
            }
        return out


@dataclass(frozen=True)
class SchemaChange:
    """One entry of a table's schema history: its registration (`before` None) or an owner's
    edit, with the declared schema before and after."""

    id: int
    time: str
    dataset: str
    table: str
    before: TableSchema | None
    after: TableSchema
    note: str = ""

    def to_json(self) -> dict:
        return {
            "time": self.time,
            "table": self.table,
            "before": None if self.before is None else self.before.to_json(),
            "after": self.after.to_json(),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: dict, dataset: str = "", id: int = 0) -> SchemaChange:  # noqa: A002
        before = data.get("before")
        return cls(
            id,
            str(data["time"]),
            dataset,
            str(data["table"]),
            None if before is None else TableSchema.from_json(before),
            TableSchema.from_json(data["after"]),
            str(data.get("note", "")),
        )


@dataclass(frozen=True)
class SavedPlan:
    """A budget plan saved for a dataset: the intended releases (`items`, each a JSON object
    written by `core.planning.budget`) and their planned total (ε, δ). Saving charges nothing."""

    id: int
    time: str
    dataset: str
    name: str
    items: tuple[dict, ...]
    epsilon: float
    delta: float
    note: str = ""
    after_release: int = 0  # the last release id when saved: later releases fall under it
