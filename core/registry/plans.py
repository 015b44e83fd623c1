"""Budget plans kept in the registry (issue 21): stored for comparison with the spend, never
charged and never reserving budget. A mixin of `core.registry.registry.Registry`."""

from __future__ import annotations

import json
from collections.abc import Iterable

from core.errors import InputError
from core.privacy.cost import Cost
from core.registry.models import SavedPlan
from core.registry.store import now


class PlanStore:
    """`save_plan` and `plans` (uses the registry's `dataset`, `_write` and `_read`)."""

    def save_plan(
        self,
        dataset: str,
        name: str,
        items: Iterable[dict],
        epsilon: float,
        delta: float = 0.0,
        note: str = "",
    ) -> SavedPlan:
        """Record a budget plan for a registered dataset. Stores it and nothing else: no
        budget is charged or reserved (the planned total is kept for comparison only)."""
        d = self.dataset(dataset)
        items = tuple(dict(i) for i in items)
        Cost(epsilon, delta)  # finite, >= 0
        if not str(name).strip():
            raise InputError("a budget plan needs a name. Fix: --name NAME.")
        time = now()
        with self._write() as con:
            last = con.execute("SELECT coalesce(max(id), 0) FROM releases").fetchone()[0]
            cur = con.execute(
                "INSERT INTO plans(time, dataset, name, items, epsilon, delta, note, "
                "after_release) VALUES (?,?,?,?,?,?,?,?)",
                (time, d.name, str(name), json.dumps(list(items), default=str), float(epsilon),
                 float(delta), str(note), int(last)),
            )  # fmt: skip
        return SavedPlan(
            cur.lastrowid, time, d.name, str(name), items, float(epsilon), float(delta),
            str(note), int(last),
        )  # fmt: skip

    def plans(self, dataset: str | None = None) -> list[SavedPlan]:
        """Saved budget plans (of one dataset), oldest first."""
        sql = (
            "SELECT id, time, dataset, name, items, epsilon, delta, note, after_release FROM plans"
        )
        args: tuple = ()
        if dataset is not None:
            sql, args = sql + " WHERE dataset=?", (dataset,)
        return [
            SavedPlan(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), r[5], r[6], r[7], r[8])
            for r in self._read(sql + " ORDER BY id", args)
        ]
