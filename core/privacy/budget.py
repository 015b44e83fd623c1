"""The privacy budget ledger: one place where every epsilon/delta spend is recorded.

Sequential spends add up. Parallel spends share a `group` (disjoint parts of the data, e.g.
the leaves of one tree level) and the group costs the largest of its spends. A spend that
would push the total past the ledger's limit is refused before anything is released.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from typing import Literal

from core.errors import BudgetExceededError

Composition = Literal["sequential", "parallel"]

# Floating-point slack when comparing sums of epsilon parts to a total (e.g. 0.1 + 0.2 vs 0.3).
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Spend:
    mechanism: str
    protects: str
    epsilon: float
    delta: float = 0.0
    composition: Composition = "sequential"
    group: str | None = None


class BudgetLedger:
    """Records spends and reports what is spent and what remains against optional totals."""

    def __init__(self, total_epsilon: float | None = None, total_delta: float | None = None):
        for name, value in (("total epsilon", total_epsilon), ("total delta", total_delta)):
            if value is not None and not value >= 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
        self.total_epsilon = total_epsilon
        self.total_delta = total_delta
        self._spends: list[Spend] = []

    # -- accounting ---------------------------------------------------------------------
    @property
    def spends(self) -> list[Spend]:
        return list(self._spends)

    @staticmethod
    def _cost(spends: list[Spend]) -> tuple[float, float]:
        eps = delta = 0.0
        groups: dict[str, tuple[float, float]] = {}
        for s in spends:
            if s.composition == "parallel":
                e, d = groups.get(s.group, (0.0, 0.0))
                groups[s.group] = (max(e, s.epsilon), max(d, s.delta))
            else:
                eps += s.epsilon
                delta += s.delta
        for e, d in groups.values():
            eps += e
            delta += d
        return eps, delta

    @property
    def epsilon_spent(self) -> float:
        return self._cost(self._spends)[0]

    @property
    def delta_spent(self) -> float:
        return self._cost(self._spends)[1]

    @property
    def epsilon_remaining(self) -> float | None:
        return (
            None
            if self.total_epsilon is None
            else max(0.0, self.total_epsilon - self.epsilon_spent)
        )

    @property
    def delta_remaining(self) -> float | None:
        return None if self.total_delta is None else max(0.0, self.total_delta - self.delta_spent)

    def scope(self, name: str) -> str:
        """A group prefix for one release's parallel spends, unique on this ledger.

        Parallel spends sharing a group cost only their maximum, so two releases recorded on one
        ledger must never share a group name (the second would be charged almost nothing).
        The first release uses `name`; later ones use `name#2`, `name#3`, ...
        """
        used = {s.group for s in self._spends if s.group}
        scope, k = name, 1
        while any(g == scope or g.startswith(scope + "-") for g in used):
            k += 1
            scope = f"{name}#{k}"
        return scope

    # -- spending -------------------------------------------------------------------------
    def check(self, planned: list[Spend]) -> None:
        """Raise `BudgetExceededError` if recording `planned` would exceed a total. Records nothing."""
        eps, delta = self._cost(self._spends + list(planned))
        if self.total_epsilon is not None and eps > self.total_epsilon + _TOLERANCE:
            raise BudgetExceededError(
                f"privacy budget exceeded: this needs epsilon {eps - self.epsilon_spent:g} but only "
                f"{self.epsilon_remaining:g} of {self.total_epsilon:g} remains. Nothing was released; "
                "lower epsilon or raise the total budget."
            )
        if self.total_delta is not None and delta > self.total_delta + _TOLERANCE:
            raise BudgetExceededError(
                f"privacy budget exceeded: this needs delta {delta - self.delta_spent:g} but only "
                f"{self.delta_remaining:g} of {self.total_delta:g} remains. Nothing was released; "
                "lower delta or raise the total budget."
            )

    def spend(
        self,
        mechanism: str,
        protects: str,
        epsilon: float,
        delta: float = 0.0,
        composition: Composition = "sequential",
        group: str | None = None,
    ) -> Spend:
        """Record one spend after checking it fits; returns the recorded entry."""
        entry = make_spend(mechanism, protects, epsilon, delta, composition, group)
        self.check([entry])
        self._spends.append(entry)
        return entry

    def spend_all(self, planned: list[Spend]) -> None:
        """Record several spends atomically: all of them fit, or none is recorded."""
        self.check(planned)
        self._spends.extend(planned)

    # -- export -------------------------------------------------------------------------
    def to_records(self) -> list[dict]:
        return [asdict(s) for s in self._spends]

    def summary(self) -> dict:
        return {
            "epsilon_spent": self.epsilon_spent,
            "delta_spent": self.delta_spent,
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "epsilon_remaining": self.epsilon_remaining,
            "delta_remaining": self.delta_remaining,
        }

    def to_json(self) -> str:
        return json.dumps({**self.summary(), "spends": self.to_records()}, indent=2)

    @classmethod
    def from_json(cls, text: str) -> BudgetLedger:
        data = json.loads(text)
        ledger = cls(data.get("total_epsilon"), data.get("total_delta"))
        ledger._spends = [Spend(**s) for s in data["spends"]]
        return ledger

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(Spend.__dataclass_fields__))
        writer.writeheader()
        writer.writerows(self.to_records())
        return buf.getvalue()

    @classmethod
    def from_csv(
        cls, text: str, total_epsilon: float | None = None, total_delta: float | None = None
    ) -> BudgetLedger:
        ledger = cls(total_epsilon, total_delta)
        for row in csv.DictReader(io.StringIO(text)):
            ledger._spends.append(
                make_spend(
                    row["mechanism"],
                    row["protects"],
                    float(row["epsilon"]),
                    float(row["delta"]),
                    row["composition"],
                    row["group"] or None,
                )
            )
        return ledger


def make_spend(
    mechanism: str,
    protects: str,
    epsilon: float,
    delta: float = 0.0,
    composition: Composition = "sequential",
    group: str | None = None,
) -> Spend:
    """Validate and build a `Spend` (for `BudgetLedger.spend_all`)."""
    if not (epsilon >= 0 and epsilon != float("inf")):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon}")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if composition not in ("sequential", "parallel"):
        raise ValueError(f"composition must be 'sequential' or 'parallel', got {composition!r}")
    if composition == "parallel" and not group:
        raise ValueError(
            "a parallel spend needs a group naming the disjoint partition it belongs to"
        )
    return Spend(mechanism, protects, float(epsilon), float(delta), composition, group)
