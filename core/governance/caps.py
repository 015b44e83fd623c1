"""Per-request caps: the most one request may spend, checked before anything is charged.

A registered dataset's policy caps are enforced by the registry's charge itself (re-read under
its write lock). These caps are the invocation's own — `dpx sql --max-epsilon-per-query E1
--max-delta-per-query D1` on files given directly — and come into the governed flow as one of
its policy checks (`Request.extra_checks`). Their refusals carry DP SQL's code DPX-B002.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.errors import InputError


@dataclass(frozen=True)
class QueryCaps:
    """The most one query may spend; None means no cap on that parameter."""

    max_epsilon: float | None = None
    max_delta: float | None = None
    source: str = "the per-query cap"  # e.g. "dataset `sales` policy" or "--max-epsilon-per-query"

    def __post_init__(self):
        e, d = self.max_epsilon, self.max_delta
        if e is not None and (
            isinstance(e, bool) or not isinstance(e, (int, float)) or not math.isfinite(e) or e <= 0
        ):
            raise InputError(
                f"DPX-B002 max_epsilon_per_query must be a finite number > 0, got {e}. "
                "Fix: e.g. --max-epsilon-per-query 1."
            )
        if d is not None and (
            isinstance(d, bool) or not isinstance(d, (int, float)) or not 0 <= d < 1
        ):
            raise InputError(
                f"DPX-B002 max_delta_per_query must be in [0, 1), got {d}. "
                "Fix: e.g. --max-delta-per-query 1e-5."
            )

    def check(self, epsilon: float, delta: float) -> None:
        """Refuse (DPX-B002) a query whose total ε or δ is above a cap; nothing is charged."""
        if self.max_epsilon is not None and epsilon > self.max_epsilon * (1 + 1e-12):
            raise InputError(
                f"DPX-B002 this query needs epsilon = {epsilon:.4g}, above "
                f"max_epsilon_per_query = {self.max_epsilon:g} ({self.source}). Nothing was "
                f"charged. Fix: lower epsilon to <= {self.max_epsilon:g}."
            )
        if self.max_delta is not None and delta > self.max_delta * (1 + 1e-12):
            raise InputError(
                f"DPX-B002 this query needs delta = {delta:.3g}, above "
                f"max_delta_per_query = {self.max_delta:g} ({self.source}). Nothing was "
                f"charged. Fix: lower delta to <= {self.max_delta:g}"
                + (" or use PUBLIC_GROUPS (no delta)." if self.max_delta == 0 else ".")
            )


NO_CAPS = QueryCaps()
