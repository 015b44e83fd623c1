"""A dataset's budget account over time: `set_budget` (the owner sets a total; recorded) and
`budget_history` (those changes and every restore, `core.registry.restores`). A mixin of
`core.registry.registry.Registry`."""

from __future__ import annotations

from core.errors import InputError
from core.registry.models import BudgetChange, Policy
from core.registry.restores import restore_history
from core.registry.store import now

_TOLERANCE = 1e-9  # float slack when comparing sums of ε to a total (as the registry's)


class BudgetHistory:
    """Uses the registry's `dataset`, `_write`, `_read`, `_guard`, `_con`, `_composition`."""

    def set_budget(
        self, name: str, epsilon: float | None = None, delta: float | None = None
    ) -> BudgetChange:
        """Set a dataset's total (ε, δ), recorded in its history. A total below what is
        already spent is refused: there is no reset."""
        d = self.dataset(name)
        with self._write() as con:
            new = Policy(
                d.policy.epsilon_total if epsilon is None else epsilon,
                d.policy.delta_total if delta is None else delta,
                d.policy.max_epsilon_per_query,
                d.policy.max_delta_per_query,
            )
            # the spend under the dataset's accounting at the new total delta (pld's epsilon
            # depends on it: a lower total delta leaves less slack for the composition)
            spent = self._composition(con, d, delta_total=new.delta_total).spent
            eps_spent, delta_spent = spent.epsilon, spent.delta
            if new.epsilon_total < eps_spent - _TOLERANCE or new.delta_total < delta_spent - 1e-15:
                raise InputError(
                    f"dataset '{name}' has already spent epsilon {eps_spent:g}, delta "
                    f"{delta_spent:g}; a total below that is refused (there is no reset)."
                )
            change = (
                now(),
                name,
                d.policy.epsilon_total,
                new.epsilon_total,
                d.policy.delta_total,
                new.delta_total,
            )  # the row stored and the BudgetChange returned, field for field
            cur = con.execute(
                "INSERT INTO budget_changes(time, dataset, epsilon_before, epsilon_after, "
                "delta_before, delta_after) VALUES (?,?,?,?,?,?)",
                change,
            )
            con.execute(
                "UPDATE datasets SET epsilon_total=?, delta_total=? WHERE name=?",
                (new.epsilon_total, new.delta_total, name),
            )
        return BudgetChange(cur.lastrowid, *change)

    def budget_history(self, name: str) -> list[BudgetChange]:
        """Every change of `name`'s budget account, oldest first: `dpx dataset budget`
        commands and restores (`ChangeKind.RESTORE`, see `core.registry.restores`)."""
        rows = self._read(
            "SELECT id, time, dataset, epsilon_before, epsilon_after, delta_before, "
            "delta_after FROM budget_changes WHERE dataset=? ORDER BY id",
            (name,),
        )
        with self._guard():
            restores = restore_history(self._con, name)
        changes = [BudgetChange(*r) for r in rows] + restores
        return sorted(changes, key=lambda c: c.time)  # stable: same second keeps its order
