"""The location page's Plan step as typed objects (issue 28): what a pilot was drawn on, what a
plan rests on, and what its answer was computed from.

Pure (no Streamlit), so tests build them without a page. A kept pilot and a kept plan hold the
request they were made with; they are stale when its `fingerprint()` differs from the request
the widgets make now.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ui.fingerprint import fingerprint as fingerprint_of


@dataclass(frozen=True)
class PilotData:
    """What a pilot is drawn on: the data, its columns, the unit (person column and K) and the
    public bounding box."""

    data: str
    lat: str
    lon: str
    person: str | None
    per_person: int | None
    bbox: tuple[float, float, float, float]

    def fingerprint(self) -> str:
        return fingerprint_of(self)


class BasisKind(StrEnum):
    NEW_PILOT = "pilot"
    RECORDED_PILOT = "recorded"
    DECLARED = "declared"


@dataclass(frozen=True)
class PlanBasis:
    """What a plan rests on: this session's pilot (its release id, ε and data), a recorded
    pilot (its release id), or a declared public size and shape."""

    kind: BasisKind
    release_id: int | None = None
    epsilon: float | None = None
    data: PilotData | None = None
    declared_n: int | None = None
    declared_shape: str | None = None


@dataclass(frozen=True)
class LocationPlanRequest:
    """One plan as asked for: its basis, the target MRE, the methods and the public grid."""

    basis: PlanBasis
    target: float
    methods: tuple[str, ...]
    rows: int
    cols: int

    def fingerprint(self) -> str:
        return fingerprint_of(self)
