"""A `BudgetLedger` whose charges go to the registry (the DP SQL service charges through it).

`spend_all` is where the DP SQL service commits to a query, before any data is read: here it
becomes one atomic registry charge (`Registry.charge`). For a registered dataset the ledger's
totals are the dataset's and its spent amount starts at what earlier releases (of any process)
spent; for files given directly, the totals are the invocation's own (`--budget-epsilon`), as
before, and the run is only recorded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.errors import InputError
from core.privacy import BudgetLedger, Spend, make_spend
from core.registry.models import Dataset, Mechanism, Release
from core.registry.registry import Registry

PRIOR_MECHANISM = "earlier releases of this dataset (registry)"


_SCALE = re.compile(r"scale ([0-9][0-9.eE+-]*)")


def _scale_in(label: str) -> float | None:
    """The noise scale a mechanism label states ("... scale 3.5)"), if any."""
    found = _SCALE.search(label)
    try:
        return float(found.group(1)) if found else None
    except ValueError:
        return None


def mechanisms_from_spends(spends: Iterable[Spend]) -> list[Mechanism]:
    """One row per sequential spend and one per parallel group (costing its maximum), so the
    rows' ε add up to what the spends cost under the ledger's composition rules."""
    rows: list[Mechanism] = []
    groups: dict[str, list[Spend]] = {}
    for s in spends:
        if s.composition == "parallel":
            groups.setdefault(s.group, []).append(s)
        else:
            scale = _scale_in(s.mechanism)
            # Laplace scale = sensitivity / ε, so a stated scale also gives the sensitivity
            sensitivity = scale * s.epsilon if scale is not None and s.epsilon > 0 else None
            rows.append(Mechanism(s.mechanism, s.epsilon, s.delta, sensitivity, scale))
    for group, members in groups.items():
        rows.append(
            Mechanism(
                f"{members[0].mechanism} (parallel composition over disjoint parts: {group})",
                max(m.epsilon for m in members),
                max(m.delta for m in members),
            )
        )
    return rows


class RegistryLedger(BudgetLedger):
    """Charges the registry atomically in `spend_all`; `release` is the recorded run after it."""

    def __init__(
        self,
        registry: Registry,
        tool: str,
        dataset: Dataset | None,
        params: dict,
        mode: str,
        total_epsilon: float | None = None,
    ):
        if dataset is not None:
            super().__init__(dataset.policy.epsilon_total, dataset.policy.delta_total)
        else:
            super().__init__(total_epsilon)
        self.registry = registry
        self.tool = tool
        self.dataset = dataset
        self.params = params
        self.mode = mode
        self.release: Release | None = None
        self.refused = False
        self._refresh()

    def _refresh(self) -> None:
        """Re-read what the dataset has spent (other processes may have charged it)."""
        if self.dataset is None:
            return
        own = [s for s in self._spends if s.mechanism != PRIOR_MECHANISM]
        eps, delta = self.registry.spent(self.dataset.name)
        own_eps = sum(s.epsilon for s in own)
        own_delta = sum(s.delta for s in own)
        prior_eps, prior_delta = max(0.0, eps - own_eps), max(0.0, delta - own_delta)
        prior = [Spend(PRIOR_MECHANISM, "registry", prior_eps, prior_delta)] if eps or delta else []
        self._spends = prior + own

    def check(self, planned: list[Spend]) -> None:
        self._refresh()
        super().check(planned)

    def spend_all(self, planned: list[Spend]) -> None:
        """Check locally, then charge the registry in one transaction (which re-checks the
        dataset's budget and caps under a write lock), then record locally."""
        planned = list(planned)
        self.check(planned)
        try:
            charged = self.registry.charge(
                self.tool,
                None if self.dataset is None else self.dataset.name,
                self.params,
                mechanisms_from_spends(planned),
                self.mode,
            )
        except InputError:
            self.refused = True  # recorded as a refusal by the registry itself
            raise
        self.release = charged
        self._spends.extend(planned)

    def spend(self, mechanism, protects, epsilon, delta=0.0, composition="sequential", group=None):
        """One spend, charged to the registry like `spend_all`."""
        entry = make_spend(mechanism, protects, epsilon, delta, composition, group)
        self.spend_all([entry])
        return entry
