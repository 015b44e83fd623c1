"""Rows of a PP release from the published plan: the plan's slots, or each record's own draw.

The plan (`core.balancing.release`) gives sub-table i s_i(x) SLOTS of value x; value x has
c~(x) = sum_i s_i(x) slots in all (its noisy count). Two ways to make the published rows, each a
function of the plan and per-row randomness only (the argument is in `core.balancing.release`):

- `slot_rows`: one row per slot (the SA-only publication: no record is read at all);
- `draw_record_subtables`: every record draws its sub-table on its own - a record of value x
  takes a uniformly drawn slot of x, so P(i | x) = s_i(x) / c~(x) exactly; a record whose value
  has no slot (noisy count 0, or not a declared category) takes a uniformly drawn slot of ALL
  slots (P(i) = n~_i / n~) and that slot's value as its starting value.

Then `perturb` randomizes each row's value within its sub-table through the sub-tables'
`PPRandomization` objects (one vectorised pass). Vectorised throughout: one integer draw per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.balancing.subtables import SubTable
from core.privacy import Accountant, PPRandomization


@dataclass(frozen=True)
class Slots:
    """The plan's slots as runs sorted by (value, sub-table): run k is `count[k]` slots of value
    `values[value[k]]` in sub-table `group[k]`, where that value is entry `local[k]` of the
    sub-table's domain `domains[group[k]]` (D_i in canonical order)."""

    values: list[str]  # planned value index -> label
    domains: list[list[str]]
    group: np.ndarray
    value: np.ndarray
    local: np.ndarray
    count: np.ndarray

    @classmethod
    def of(cls, subtables: Sequence[SubTable]) -> Slots:
        domains = [list(s.counts) for s in subtables]
        values = list(dict.fromkeys(v for d in domains for v in d))
        index = {v: k for k, v in enumerate(values)}
        runs = [
            (index[v], g, loc, c)
            for g, s in enumerate(subtables)
            for loc, (v, c) in enumerate(s.counts.items())
            if c > 0
        ]
        runs.sort()
        value, group, local, count = (
            np.array(col, dtype=np.int64) for col in zip(*runs, strict=True)
        )
        return cls(values, domains, group, value, local, count)

    @property
    def n_slots(self) -> int:
        return int(self.count.sum())

    def value_totals(self) -> np.ndarray:
        """Slots per planned value (its noisy count c~(x))."""
        return np.bincount(self.value, weights=self.count, minlength=len(self.values)).astype(
            np.int64
        )

    def label_of(self, group: np.ndarray, local: np.ndarray) -> np.ndarray:
        """The value label of local code `local` in sub-table `group`, per row."""
        offsets = np.cumsum([0] + [len(d) for d in self.domains])[:-1]
        flat = np.array([v for d in self.domains for v in d], dtype=object)
        return flat[offsets[group] + local]

    def codes_of(self, labels: Sequence[str]) -> np.ndarray:
        """Planned value index of each label, -1 for a label without a slot."""
        index = {v: k for k, v in enumerate(self.values)}
        return np.array([index.get(str(lab), -1) for lab in labels], dtype=np.int64)


def slot_rows(slots: Slots) -> tuple[np.ndarray, np.ndarray]:
    """(sub-table, local code) of every slot: the rows of a publication built from the plan."""
    return np.repeat(slots.group, slots.count), np.repeat(slots.local, slots.count)


def draw_record_subtables(
    value_index: np.ndarray,
    slots: Slots,
    accountant: Accountant,
    mechanism: PPRandomization,
) -> tuple[np.ndarray, np.ndarray]:
    """(sub-table, local starting code) per record, each record drawn on its own from the plan.

    `value_index[r]` is record r's planned value index (-1: its value has no slot). One draw
    u uniform in {0..c~(x)-1} picks the u-th slot of x (all slots for a value without slot); the
    draw is part of the record's PP randomization, so it is made under `mechanism` (one of the
    release's sub-table mechanisms, recorded on the accountant)."""
    value_index = np.asarray(value_index, dtype=np.int64)
    ends = np.cumsum(slots.count)  # runs sorted by value: each value's slots are contiguous
    totals = slots.value_totals()
    first = np.concatenate(([0], np.cumsum(totals)[:-1]))
    planned = value_index >= 0
    safe = np.where(planned, value_index, 0)
    high = np.where(planned, totals[safe], slots.n_slots)
    base = np.where(planned, first[safe], 0)
    with accountant.drawing(mechanism) as noise:
        u = noise.integers(high) if high.size else np.zeros(0, dtype=np.int64)
    run = np.searchsorted(ends, base + u, side="right")
    return slots.group[run], slots.local[run]


def perturb(
    accountant: Accountant,
    mechanisms: Sequence[PPRandomization],
    slots: Slots,
    group: np.ndarray,
    local: np.ndarray,
) -> np.ndarray:
    """The published value label of each row: kept with p_i, else uniform over D_i, through the
    sub-tables' mechanisms (`PPRandomization.draw_partitioned`, exact probabilities)."""
    published = PPRandomization.draw_partitioned(accountant, tuple(mechanisms), group, local)
    return slots.label_of(group, published)
