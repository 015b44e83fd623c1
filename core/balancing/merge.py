"""Phase 2, merging sub-tables: PROJECT DESIGN, not described in the thesis (spec section 6.1).

Policy `utility`: greedily merge the most similar pair (Jaccard index of the domains) among the
pairs whose merge strictly increases sum(n_i * p_i); ties by larger gain, then smaller union
domain, then smallest (i, j). The union takes the lower index. A merge never raises rho1 above
the worse of its two parts (mediant inequality), so admissible parts give an admissible union.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fractions import Fraction

from core.balancing.subtables import SubTable, subtable_params
from core.errors import InputError

MERGE_POLICIES: tuple[str, ...] = ("none", "utility")
MAX_MERGE_GROUPS = 400  # the greedy step looks at every pair: O(k^2) per merge


@dataclass(frozen=True)
class MergeStep:
    i: int  # 0-based indices into the list before this step; the union takes index i
    j: int
    jaccard: Fraction
    gain: Fraction
    union: SubTable


def _contribution(s: SubTable) -> Fraction:
    return s.size * s.p if s.p is not None else Fraction(0)


def _union(a: SubTable, b: SubTable, canonical_pos: dict[str, int]) -> dict[str, int]:
    merged = dict(a.counts)
    for v, c in b.counts.items():
        merged[v] = merged.get(v, 0) + c
    return dict(sorted(merged.items(), key=lambda kv: canonical_pos[kv[0]]))


def merge_utility(
    subtables: Sequence[SubTable],
    sa_prime: Collection[str],
    rho2: Fraction,
    canonical: Sequence[str],
) -> tuple[list[SubTable], list[MergeStep]]:
    """Greedy `utility` merging; returns the merged sub-tables and the steps taken."""
    if len(subtables) > MAX_MERGE_GROUPS:
        raise InputError(
            f"merging looks at every pair of sub-tables and is limited to {MAX_MERGE_GROUPS}; "
            f"this partition has {len(subtables)}. Use --merge none (the default)."
        )
    pos = {v: i for i, v in enumerate(canonical)}
    current = list(subtables)
    steps: list[MergeStep] = []
    while True:
        best = None
        for i in range(len(current)):
            for j in range(i + 1, len(current)):
                a, b = current[i], current[j]
                union_counts = _union(a, b, pos)
                bound = a.bound if a.bound is not None and b.bound is not None else None
                if bound is not None and b.bound is not None:
                    bound = max(a.bound, b.bound)
                union = subtable_params(union_counts, sa_prime, rho2, bound=bound)
                if not union.admissible:
                    continue
                gain = _contribution(union) - _contribution(a) - _contribution(b)
                if gain <= 0:
                    continue
                da, db = set(a.counts), set(b.counts)
                jac = Fraction(len(da & db), len(da | db))
                rank = (jac, gain, -union.m, -i, -j)
                if best is None or rank > best[0]:
                    best = (rank, MergeStep(i=i, j=j, jaccard=jac, gain=gain, union=union))
        if best is None:
            return current, steps
        step = best[1]
        steps.append(step)
        current[step.i] = step.union
        del current[step.j]
