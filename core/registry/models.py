"""Typed records of the registry: datasets, their files and policy, releases and refusals."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

from core.errors import InputError


class RunKind(StrEnum):
    """What a recorded run counts as."""

    RELEASE = "release"  # a registered dataset, charged against its budget
    UNREGISTERED = "unregistered"  # files given directly by the owner; recorded, not limited
    DEMO = "demo"  # seeded noise: labelled, never counted as a release


class Status(StrEnum):
    """Where a charged run stands."""

    CHARGED = "charged"  # charged, computation under way (or the process died: the charge stays)
    RELEASED = "released"  # computed; the artefact is attached
    FAILED = "failed"  # the computation failed after the charge; the charge stays


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
    name: str
    tables: tuple[TableFile, ...]
    policy: Policy
    uid: str | None = None
    teaching: bool = False
    created: str = ""

    @property
    def private_tables(self) -> tuple[TableFile, ...]:
        return tuple(t for t in self.tables if not t.public)

    @property
    def public_tables(self) -> tuple[TableFile, ...]:
        return tuple(t for t in self.tables if t.public)


@dataclass(frozen=True)
class Mechanism:
    """One noisy statistic of a release: its mechanism, charge, sensitivity and noise scale."""

    kind: str
    epsilon: float
    delta: float = 0.0
    sensitivity: float | None = None
    scale: float | None = None


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
    mechanisms: tuple[Mechanism, ...]
    epsilon: float
    delta: float
    mode: str
    artefact_sha256: str | None = None
    artefact: dict | None = None
    note: str = ""
    privacy: dict = field(default_factory=dict)  # e.g. {"unit": ..., "rho1": ..., "rho2": ...}

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


@dataclass(frozen=True)
class BudgetChange:
    """One `dpx dataset budget` command: the totals before and after."""

    id: int
    time: str
    dataset: str
    epsilon_before: float
    epsilon_after: float
    delta_before: float
    delta_after: float
