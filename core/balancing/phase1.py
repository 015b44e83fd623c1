"""Phase 1 of the PP algorithm: balancing (the thesis's Figure 10, corrected; spec section 2).

Works on per-value counts only. Each iteration takes h records from each of the beta most
frequent values, with h = min(f_beta, (|T0| - beta*f_beta+1) // beta), the closed form of
Equation (22); h = 0 makes the whole remainder the last group.

The live order is kept as a sorted list of keys (-count, rank, value index). Re-sorting after
an iteration only moves the beta head values, so they are re-inserted with `bisect` instead of
sorting all d values again; this keeps thousands of iterations over 10,000 values fast.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

TiePolicy = Literal["stable", "value_order"]
TIE_POLICIES: tuple[str, ...] = ("stable", "value_order")

# Record the full order in every trace row only up to this many distinct values; beyond it the
# order of a step is rebuilt on demand by `order_at` (storing d entries per row would need
# gigabytes for 10,000 values and thousands of iterations).
KEEP_ORDERS_MAX_VALUES = 1000
# ... but every CHECKPOINT_EVERY-th order is kept, so rebuilding any step replays few iterations.
CHECKPOINT_EVERY = 32


@dataclass(frozen=True)
class TraceRow:
    """One iteration of Phase 1 (spec section 2.3)."""

    j: int
    n0: int
    order: tuple[tuple[str, int], ...] | None  # (value, count) at the start; None if not kept
    f1: tuple[str | None, int]
    fb: tuple[str | None, int]
    fb1: tuple[str | None, int]  # (None, 0) when exactly beta values remain
    phi: Fraction  # phi(f_beta) = |T0|/beta - max{f1 - f_beta, f_beta+1}
    branch: str  # "h=fb" | "floor"  (the branch of Equation (22))
    h: int  # closed form
    h_eq22: int  # Equation (22) evaluated with Fractions (tests assert h_eq22 == h)
    group: dict[str, int]
    n_after: int
    f1_after: int
    balanced_after: bool
    n_live: int  # distinct values in T0 at the start

    @property
    def is_remainder(self) -> bool:
        return self.h == 0


@dataclass
class Phase1Result:
    beta: int
    canonical: list[str]
    counts: dict[str, int]
    tie_policy: str
    groups: list[dict[str, int]]
    trace: list[TraceRow]
    violations: list[str] = field(default_factory=list)
    checkpoints: dict[int, tuple[tuple[str, int], ...]] = field(default_factory=dict)

    @property
    def h_sequence(self) -> list[int]:
        return [row.h for row in self.trace]


def equation_22(n0: int, beta: int, f1: int, fb: int, fb1: int) -> tuple[Fraction, str, int]:
    """phi(f_beta), the branch and h exactly as Equation (22) states them, with Fractions."""
    phi = Fraction(n0, beta) - max(f1 - fb, fb1)
    if phi >= fb:
        return phi, "h=fb", fb
    floor_arg = Fraction(n0, beta) - fb1
    return phi, "floor", floor_arg.numerator // floor_arg.denominator


def closed_form_h(n0: int, beta: int, fb: int, fb1: int) -> int:
    """h = min(f_beta, (|T0| - beta*f_beta+1) // beta): integer arithmetic only."""
    return min(fb, (n0 - beta * fb1) // beta)


def balance(
    counts: Mapping[str, int],
    beta: int,
    canonical: Sequence[str],
    tie_policy: TiePolicy = "stable",
    keep_orders: bool | None = None,
) -> Phase1Result:
    """Run Phase 1 on `counts` with `beta`; `canonical` is the initial order (spec section 2.4).

    `stable`: each iteration stable-sorts the previous order by the new counts (the default,
    which reproduces Example 6). `value_order`: re-sort from the canonical order each time.
    """
    if beta < 1:
        raise ValueError(f"beta must be >= 1, got {beta}")
    if tie_policy not in TIE_POLICIES:
        raise ValueError(f"unknown tie policy {tie_policy!r}; use one of {TIE_POLICIES}")
    labels = [v for v in canonical if counts.get(v, 0) > 0]
    live_counts = [int(counts[v]) for v in labels]
    if keep_orders is None:
        keep_orders = len(labels) <= KEEP_ORDERS_MAX_VALUES
    # sorted keys (-count, rank, index); initial ranks follow the canonical order
    keys = sorted((-c, i, i) for i, c in enumerate(live_counts))
    next_rank = 0  # stable policy: re-inserted head values get ranks below every existing one
    n0 = sum(live_counts)
    result = Phase1Result(
        beta=beta,
        canonical=list(canonical),
        counts={v: int(counts[v]) for v in canonical if counts.get(v, 0) > 0},
        tie_policy=tie_policy,
        groups=[],
        trace=[],
    )
    j = 1
    while keys:
        order = tuple((labels[k[2]], -k[0]) for k in keys) if keep_orders else None
        if not keep_orders and (j - 1) % CHECKPOINT_EVERY == 0:
            result.checkpoints[j] = tuple((labels[k[2]], -k[0]) for k in keys)
        n_live = len(keys)
        f1 = (labels[keys[0][2]], -keys[0][0])
        if n_live < beta:  # impossible for a beta-balanced T0 (spec 2.7); logged, not hidden
            result.violations.append(
                f"iteration {j}: only {n_live} values left, fewer than beta = {beta}"
            )
            fb, fb1 = (None, 0), (None, 0)
            phi, branch, h_eq22, h = Fraction(0), "floor", 0, 0
        else:
            fb = (labels[keys[beta - 1][2]], -keys[beta - 1][0])
            fb1 = (labels[keys[beta][2]], -keys[beta][0]) if n_live > beta else (None, 0)
            phi, branch, h_eq22 = equation_22(n0, beta, f1[1], fb[1], fb1[1])
            h = closed_form_h(n0, beta, fb[1], fb1[1])
        if h == 0:
            group = {labels[k[2]]: -k[0] for k in keys}
            keys = []
            n0 = 0
        else:
            head = keys[:beta]
            del keys[:beta]
            group = {labels[k[2]]: h for k in head}
            n0 -= beta * h
            for negc, _rank, idx in reversed(head):
                left = -negc - h
                if left > 0:
                    if tie_policy == "stable":
                        next_rank -= 1
                        rank = next_rank
                    else:
                        rank = idx
                    insort(keys, (-left, rank, idx))
        f1_after = -keys[0][0] if keys else 0
        result.groups.append(group)
        result.trace.append(
            TraceRow(
                j=j,
                n0=n0 + sum(group.values()),
                order=order,
                f1=f1,
                fb=fb,
                fb1=fb1,
                phi=phi,
                branch=branch,
                h=h,
                h_eq22=h_eq22,
                group=group,
                n_after=n0,
                f1_after=f1_after,
                balanced_after=beta * f1_after <= n0,
                n_live=n_live,
            )
        )
        j += 1
    return result


def order_at(result: Phase1Result, j: int) -> tuple[tuple[str, int], ...]:
    """The (value, count) order at the start of iteration j, rebuilt by replay if not stored."""
    row = result.trace[j - 1]
    if row.order is not None:
        return row.order
    index = {v: i for i, v in enumerate(result.canonical)}
    start = max((c for c in result.checkpoints if c <= j), default=1)
    if start in result.checkpoints:
        snapshot = result.checkpoints[start]
        remaining = {v: 0 for v in result.counts} | dict(snapshot)
        order = [v for v, _ in snapshot]
    else:
        start = 1
        remaining = dict(result.counts)
        order = sorted(remaining, key=lambda v: (-remaining[v], index[v]))
    for group in result.groups[start - 1 : j - 1]:
        order = _remove_group(order, remaining, group, result.tie_policy, index)
    return tuple((v, remaining[v]) for v in order)


def iter_orders(result: Phase1Result):
    """Yield the start-of-iteration order of every row in one pass (replays if not stored)."""
    if all(row.order is not None for row in result.trace):
        yield from (row.order for row in result.trace)
        return
    index = {v: i for i, v in enumerate(result.canonical)}
    remaining = dict(result.counts)
    order = sorted(remaining, key=lambda v: (-remaining[v], index[v]))
    for group in result.groups:
        yield tuple((v, remaining[v]) for v in order)
        order = _remove_group(order, remaining, group, result.tie_policy, index)


def _remove_group(order: list, remaining: dict, group: dict, tie_policy: str, index: dict) -> list:
    """Take `group` out of `remaining` (in place) and return the next iteration's order (§2.4)."""
    for v, c in group.items():
        remaining[v] -= c
    if tie_policy == "stable":
        return sorted((v for v in order if remaining[v] > 0), key=lambda v: -remaining[v])
    return sorted((v for v in order if remaining[v] > 0), key=lambda v: (-remaining[v], index[v]))
