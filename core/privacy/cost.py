"""What a release costs: (ε, δ) under basic composition, and PP's (ρ1, ρ2) claim."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Cost:
    """(ε, δ) under basic composition: costs add up."""

    epsilon: float = 0.0
    delta: float = 0.0

    def __post_init__(self):
        e, d = float(self.epsilon), float(self.delta)
        if not (math.isfinite(e) and e >= 0):
            raise ValueError(f"epsilon must be a finite number >= 0, got {self.epsilon}")
        if not (math.isfinite(d) and 0 <= d < 1):
            raise ValueError(f"delta must be in [0, 1), got {self.delta}")
        object.__setattr__(self, "epsilon", e)
        object.__setattr__(self, "delta", d)

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.epsilon + other.epsilon, min(self.delta + other.delta, 1 - 1e-300))

    def fits(self, budget: Cost, slack: float = 1e-9) -> bool:
        """True when this cost is within `budget` (with float slack: 0.1 + 0.2 vs 0.3)."""
        return (
            self.epsilon <= budget.epsilon * (1 + slack) + slack
            and self.delta <= budget.delta * (1 + slack) + 1e-15
        )

    @property
    def is_zero(self) -> bool:
        return self.epsilon == 0 and self.delta == 0


ZERO = Cost()


@dataclass(frozen=True)
class RhoClaim:
    """(ρ1, ρ2)-privacy (PP balancing): a belief ≤ ρ1 before the release stays ≤ ρ2 after."""

    rho1: Fraction
    rho2: Fraction

    def __post_init__(self):
        r1, r2 = Fraction(self.rho1), Fraction(self.rho2)
        if not 0 < r1 < r2 < 1:
            raise ValueError(f"need 0 < rho1 < rho2 < 1, got {r1}, {r2}")
        object.__setattr__(self, "rho1", r1)
        object.__setattr__(self, "rho2", r2)
