"""Distributing T'' over the groups of T' (spec section 3.1).

Quotas are proportional to group sizes in integer arithmetic, the residue goes to the last
group, and the T'' values are laid out in a fixed order (descending original frequency, ties in
canonical order) and cut sequentially, so each T'' value lands in a contiguous run of groups.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Distribution:
    quotas: list[int]  # (|g_j| * |T''|) // |T'|, before the residue
    residue: int  # |T''| - sum(quotas), added to the last group
    t2_order: list[str]  # the fixed T'' order
    received: list[dict[str, int]]  # per group: T'' value -> count (what each group takes)

    @property
    def takes(self) -> list[int]:
        """Records of T'' each group actually receives (the last one includes the residue)."""
        return [
            q + (self.residue if i == len(self.quotas) - 1 else 0)
            for i, q in enumerate(self.quotas)
        ]


def t2_order(t2_counts: Mapping[str, int], canonical: Sequence[str]) -> list[str]:
    """Descending original frequency, ties in canonical order; fixed before filling starts."""
    pos = {v: i for i, v in enumerate(canonical)}
    return sorted(t2_counts, key=lambda v: (-t2_counts[v], pos[v]))


def distribute(
    group_sizes: Sequence[int], t2_counts: Mapping[str, int], canonical: Sequence[str]
) -> Distribution:
    """Cut the T'' sequence into the groups by integer quotas (|g_j|*|T''|) // |T'|."""
    t_prime = sum(group_sizes)
    n2 = sum(t2_counts.values())
    quotas = [size * n2 // t_prime for size in group_sizes] if t_prime else []
    residue = n2 - sum(quotas)
    order = t2_order(t2_counts, canonical)
    takes = [q + (residue if i == len(quotas) - 1 else 0) for i, q in enumerate(quotas)]
    received: list[dict[str, int]] = [{} for _ in quotas]
    g = 0
    room = takes[0] if takes else 0
    for value in order:
        left = t2_counts[value]
        while left:
            while room == 0:
                g += 1
                room = takes[g]
            take = min(left, room)
            received[g][value] = received[g].get(value, 0) + take
            left -= take
            room -= take
    return Distribution(quotas=quotas, residue=residue, t2_order=order, received=received)
