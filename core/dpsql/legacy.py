"""LEGACY ADAPTER — removed when core/governance lands.

The one place where DP SQL still charges a `BudgetLedger` itself, for the callers that have
not moved to the governed flow yet (`dpx sql`, the DP SQL page, `core.registry.cli_hooks`).
The new contract is in `core.dpsql.service`: the caller checks `prepared.cost` against the
policy (caps) and the budget, charges it, and calls `run(prepared, engine, accountant)`.
`legacy_run_charged` does exactly that with the old objects, so everything keeps working until
the lead rewires the callers; then this module is deleted.

Per-query caps on ε and δ (spec §2.10 dataset policy; issue 9): a registered dataset's policy
(or the CLI flags `--max-epsilon-per-query` / `--max-delta-per-query`, or the page's
settings) bounds what one query may spend. Files given directly without such a cap keep none.
They are checked against `prepared.cost` before any data is read; in the governed flow they
become a generic policy check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.dpsql.execute.engine import Engine
from core.dpsql.plan.statistics import PROTECTS
from core.dpsql.service import Prepared, QueryResult, check_before_charge, run
from core.errors import BudgetExceededError, InputError
from core.privacy import Accountant, BudgetLedger, Noise, make_spend


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


def legacy_run_charged(
    prepared: Prepared,
    engine: Engine,
    noise: Noise,
    ledger: BudgetLedger,
    caps: QueryCaps = NO_CAPS,
) -> QueryResult:
    """LEGACY — removed when core/governance lands. Refuse (binding DPX-E001, caps DPX-B002,
    budget DPX-B001) without reading data, charge `prepared.cost` to `ledger` (one row per
    mechanism), then `run` with an accountant holding exactly that charge.

    Privacy claim: as `service.run` — (ε, δ) = `prepared.cost`, charged before any data is
    read; the ledger's rows are the labels and costs of `prepared.mechanisms`."""
    check_before_charge(prepared, engine)
    cost = prepared.cost
    caps.check(cost.epsilon, cost.delta)
    spends = [
        make_spend(m.label, PROTECTS, m.cost.epsilon, m.cost.delta) for m in prepared.mechanisms
    ]
    try:
        ledger.check(spends)  # refused before any data is read
    except BudgetExceededError as err:
        left = ledger.epsilon_remaining
        raise BudgetExceededError(
            f"DPX-B001 {err} This query needs epsilon = {cost.epsilon:.4g}, delta = "
            f"{cost.delta:.2g}"
            + (
                f"; remaining epsilon = {left:.4g}. Fix: lower epsilon to <= {left:.4g}."
                if left is not None
                else "."
            )
        ) from None
    ledger.spend_all(spends)
    result = run(prepared, engine, Accountant(noise, budget=cost))
    result.session = ledger.summary()
    return result
