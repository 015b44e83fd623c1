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
from core.privacy.cost import BudgetShortfall, Cost, check_budget


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

    def shortfall(self, epsilon: float, delta: float) -> BudgetShortfall | None:
        """What of (ε, δ) is above a cap (None: both fit), by the one budget check."""
        return check_budget(
            Cost(epsilon, delta),
            max_epsilon=self.max_epsilon,
            max_delta=self.max_delta,
            cap_source=self.source,
            raise_cap=None,
        )

    def check(self, epsilon: float, delta: float) -> None:
        """Refuse (DPX-B002) a query whose total ε or δ is above a cap; nothing is charged."""
        short = self.shortfall(epsilon, delta)
        if short is not None:
            raise InputError(f"DPX-B002 {short}")


NO_CAPS = QueryCaps()
