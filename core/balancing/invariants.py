"""Invariant checks (spec sections 2.7 and 5), used by the tests and shown on the page.

Each function returns a list of violation messages; an empty list means every check passed.
"""

from __future__ import annotations

from fractions import Fraction

from core.balancing.phase1 import Phase1Result
from core.balancing.plan import STATUS_NOTHING, PartitionPlan


def check_phase1(result: Phase1Result) -> list[str]:
    """Partition, group shape, Lemmas 1-3, branch agreement and Lemma 4 for one Phase-1 run."""
    beta = result.beta
    bad: list[str] = list(result.violations)
    totals: dict[str, int] = {}
    for row in result.trace:
        tag = f"iteration {row.j}"
        if not 0 <= row.h <= row.fb[1]:
            bad.append(f"{tag}: Lemma 1 fails (h = {row.h}, f_beta = {row.fb[1]})")
        if row.j == 1 and row.h == 0:
            bad.append(f"{tag}: h = 0 in the first iteration")
        if row.h_eq22 != row.h:
            bad.append(f"{tag}: Equation (22) gives h = {row.h_eq22}, closed form {row.h}")
        if not row.balanced_after:
            bad.append(f"{tag}: T0 not beta-balanced after removal (Lemma 2)")
        if row.h < row.fb[1]:
            lhs = beta * max(row.f1[1] - row.h - 1, row.fb1[1])
            if not lhs > row.n0 - beta * (row.h + 1):
                bad.append(f"{tag}: h = {row.h} is not maximal (Lemma 3)")
        group = row.group
        if row.h > 0:
            if len(group) != beta or any(c != row.h for c in group.values()):
                bad.append(f"{tag}: group is not beta values with h records each")
        else:
            if row.j != len(result.trace):
                bad.append(f"{tag}: the h = 0 remainder group is not the last group")
            if sum(group.values()) != row.n0:
                bad.append(f"{tag}: the h = 0 group is not the whole remainder")
            if len(group) <= beta:
                bad.append(f"{tag}: the h = 0 group has only {len(group)} values")
        size = sum(group.values())
        if beta * max(group.values()) > size:
            bad.append(f"{tag}: group is not beta-balanced (Lemma 4)")
        for v, c in group.items():
            totals[v] = totals.get(v, 0) + c
    if totals != result.counts:
        bad.append("the groups do not partition the table (per-value sums differ)")
    return bad


def check_plan(plan: PartitionPlan) -> list[str]:
    """Every invariant of a plan: Phase 1, the T'' distribution, bounds and posteriors."""
    if plan.status == STATUS_NOTHING:
        return []
    bad = check_phase1(plan.phase1)
    totals: dict[str, int] = {}
    for g in plan.groups:
        for v, c in g.items():
            totals[v] = totals.get(v, 0) + c
    if totals != plan.counts:
        bad.append("the final groups do not partition T (per-value sums differ)")
    merged = {}
    for s in plan.subtables:
        for v, c in s.counts.items():
            merged[v] = merged.get(v, 0) + c
    if merged != plan.counts:
        bad.append("the sub-tables do not partition T")
    dist = plan.distribution
    if dist is not None:
        t = len(dist.quotas)
        if sum(dist.quotas) + dist.residue != sum(plan.t2.values()):
            bad.append("quotas plus residue differ from |T''|")
        if not 0 <= dist.residue <= t - 1:
            bad.append(f"residue {dist.residue} outside [0, {t - 1}]")
        filled = [i for i, take in enumerate(dist.takes) if take > 0]  # zero-quota groups skip
        for v in plan.t2:
            runs = [k for k, i in enumerate(filled) if v in dist.received[i]]
            if runs != list(range(runs[0], runs[-1] + 1)):
                bad.append(f"T'' value {v} is not in a contiguous run of groups")
    sa = set(plan.sa_prime)
    for i, s in enumerate(plan.subtables, 1):
        if s.bound is not None and s.rho1 > s.bound:
            bad.append(f"g{i}: rho1_i = {s.rho1} exceeds its Lemma-4/5 bound {s.bound}")
        expected = Fraction(max(c for v, c in s.counts.items() if v in sa), s.size)
        if s.rho1 != expected:
            bad.append(f"g{i}: rho1_i is not computed over SA' values only")
        if s.admissible and (s.worst_posterior is None or s.worst_posterior > plan.rho2):
            bad.append(f"g{i}: worst posterior {s.worst_posterior} exceeds rho2 = {plan.rho2}")
        if s.admissible and s.p + s.m * s.q != 1:
            bad.append(f"g{i}: p + m q != 1")
    return bad
