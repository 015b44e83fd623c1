"""PP's per-sub-table randomization as a member of the mechanism family (its cost is a
(ρ1, ρ2) claim, not an ε)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from core.privacy.cost import ZERO, Cost, RhoClaim
from core.privacy.mechanisms import Accountant, Mechanism, MechanismKind


@dataclass(frozen=True, kw_only=True)
class PPRandomization(Mechanism):
    """PP's randomization of one sub-table: each record keeps its sensitive value with
    probability `retention` p, else takes a value drawn uniformly from the sub-table's domain
    of `domain_size` m values (possibly its own).

    Privacy claim ((ρ1, ρ2)-privacy, per record and per single protected value; Agrawal,
    Srikant, Thomas 2005 via γ-amplification): with q = (1 - p)/m the amplification is
    γ = (p + q)/q, and a prior ≤ `rho1` (the sub-table's ρ1ᵢ) stays ≤ γρ1/(γρ1 + 1 - ρ1) ≤
    `rho2` after seeing the record. Costs no ε.
    """

    KIND: ClassVar[MechanismKind] = MechanismKind.PP_RANDOMIZATION
    rho1: Fraction
    rho2: Fraction
    retention: Fraction
    domain_size: int

    def __post_init__(self):
        for name in ("rho1", "rho2", "retention"):
            object.__setattr__(self, name, Fraction(getattr(self, name)))
        if not 0 < self.rho1 < self.rho2 < 1:
            raise ValueError(f"need 0 < rho1 < rho2 < 1, got {self.rho1}, {self.rho2}")
        if not 0 <= self.retention < 1:
            raise ValueError(f"retention must be in [0, 1), got {self.retention}")
        if int(self.domain_size) < 1:
            raise ValueError(f"domain_size must be >= 1, got {self.domain_size}")
        if self.posterior_bound > self.rho2:
            raise ValueError(
                f"{self.label}: worst posterior {self.posterior_bound} exceeds rho2 {self.rho2}"
            )

    @property
    def cost(self) -> Cost:
        return ZERO

    @property
    def sensitivity(self) -> None:
        return None

    @property
    def scale(self) -> None:
        return None

    @property
    def claim(self) -> RhoClaim:
        return RhoClaim(self.rho1, self.rho2)

    @property
    def amplification(self) -> Fraction:
        """γ = (p + q)/q with q = (1 - p)/m."""
        q = (1 - self.retention) / self.domain_size
        return (self.retention + q) / q

    @property
    def posterior_bound(self) -> Fraction:
        g = self.amplification
        return g * self.rho1 / (g * self.rho1 + 1 - self.rho1)

    def draw(self, accountant: Accountant, local_codes) -> np.ndarray:
        """Perturb codes in 0..domain_size-1 (this sub-table's domain); exact probabilities."""
        return PPRandomization.draw_partitioned(
            accountant, (self,), np.zeros(np.size(local_codes), np.int64), local_codes
        )

    @staticmethod
    def draw_partitioned(
        accountant: Accountant,
        mechanisms: tuple[PPRandomization, ...],
        sub_ids,
        local_codes,
    ) -> np.ndarray:
        """Perturb many sub-tables in one vectorised pass: record k belongs to sub-table
        `sub_ids[k]` (whose mechanism is `mechanisms[sub_ids[k]]`) and has local code
        `local_codes[k]`. Keep iff r < a with r uniform in {0..b-1}, p = a/b exactly."""
        if not mechanisms:
            raise ValueError("draw_partitioned needs at least one sub-table's mechanism")
        for m in mechanisms:
            accountant._record(m)
        sub = np.asarray(sub_ids, dtype=np.int64)
        out = np.asarray(local_codes, dtype=np.int64).copy()
        if out.size == 0:
            return out
        num = np.array([m.retention.numerator for m in mechanisms], dtype=np.int64)
        den = np.array([m.retention.denominator for m in mechanisms], dtype=np.int64)
        size = np.array([m.domain_size for m in mechanisms], dtype=np.int64)
        with accountant.drawing(mechanisms[0]) as noise:
            replace = noise.integers(den[sub]) >= num[sub]
            if replace.any():
                out[replace] = noise.integers(size[sub[replace]])
        return out
