"""Reading recorded mechanism rows back into the objects that drew (`from_json`), and the
comparison a registry must pass (`same_mechanism`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import ClassVar

from core.privacy.cost import Cost
from core.privacy.gaussian import DiscreteGaussian
from core.privacy.mechanisms import (
    DiscreteLaplace,
    Exponential,
    Laplace,
    LatticeLaplace,
    Mechanism,
    MechanismKind,
    NoisyThreshold,
)
from core.privacy.pp_randomization import PPRandomization


@dataclass(frozen=True)
class Recorded(Mechanism):
    """A mechanism row as an older registry kept it (no draw, no accuracy beyond its scale)."""

    KIND: ClassVar[MechanismKind] = MechanismKind.RECORDED
    epsilon: float = 0.0
    delta: float = 0.0
    sensitivity: float | None = None
    scale: float | None = None

    @property
    def cost(self) -> Cost:
        return Cost(self.epsilon, self.delta)


FAMILY: dict[MechanismKind, type[Mechanism]] = {
    cls.KIND: cls
    for cls in (
        DiscreteLaplace,
        DiscreteGaussian,
        Laplace,
        LatticeLaplace,
        Exponential,
        NoisyThreshold,
        PPRandomization,
        Recorded,
    )
}


def from_json(row: dict) -> Mechanism:
    """The mechanism object a registry row was written from (`Mechanism.to_json`).

    A row without a known kind (written before mechanisms were typed) becomes `Recorded`."""
    kind = row.get("kind")
    cls = FAMILY.get(kind) if kind in MechanismKind._value2member_map_ else None
    if cls is None or cls is Recorded:
        return Recorded(
            label=str(row.get("label") or kind or "mechanism"),
            epsilon=float(row.get("epsilon") or 0.0),
            delta=float(row.get("delta") or 0.0),
            sensitivity=row.get("sensitivity"),
            scale=row.get("scale"),
        )
    names = {f.name for f in fields(cls)}
    kwargs = {k: v for k, v in row.items() if k in names}
    kwargs["in_place_of"] = tuple(row.get("in_place_of") or ())
    if cls is NoisyThreshold and "noise_scale" not in row:
        kwargs["noise_scale"] = None
    return cls(**kwargs)


def same_mechanism(a: Mechanism, b: Mechanism) -> bool:
    """Equal kind, label, cost, sensitivity and scale (what the registry must reproduce)."""

    def key(m: Mechanism):
        return (m.kind, m.label, m.cost, m.sensitivity, m.scale, tuple(m.in_place_of))

    return key(a) == key(b)


def as_dict(m: Mechanism) -> dict:
    """The dataclass fields of `m` (no derived values) — for tests and debugging."""
    return asdict(m)
