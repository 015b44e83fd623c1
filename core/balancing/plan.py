"""The whole count-level PP pipeline: SA', beta, Phase 1, the T'' distribution, optional merging,
per-sub-table parameters, the whole-table baseline, and the refusal/fallback decision.

Only `int` and `Fraction` here (spec: arithmetic rule). Records are handled in `records`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from core.balancing.distribute import Distribution, distribute
from core.balancing.merge import MERGE_POLICIES, MergeStep, merge_utility
from core.balancing.params import canonical_order, validate_counts, validate_rhos
from core.balancing.phase1 import TIE_POLICIES, Phase1Result, balance
from core.balancing.subtables import SubTable, lemma5_bounds, subtable_params
from core.errors import InputError

STATUS_OK = "ok"
STATUS_REFUSED = "refused"  # some final sub-table has rho1_i >= rho2
STATUS_BETA_ONE = "beta_one"  # beta = 1: partitioning cannot help
STATUS_NOTHING = "nothing_to_protect"  # SA' is empty

BETA_ONE_MESSAGE = (
    "beta = 1: partitioning cannot protect this table. The most frequent protected value holds "
    "more than half of the records, so every balanced group would be that value alone "
    "(rho1_i = 1). The table is published as one sub-table instead (the single-table fallback)."
)


@dataclass
class PartitionPlan:
    """Everything PP decides from the SA counts; shared by the page, the CLI and the tests."""

    rho1: Fraction
    rho2: Fraction
    counts: dict[str, int]  # canonical order
    canonical: list[str]
    canonical_given: bool
    sa_prime: list[str]
    t2: dict[str, int]  # T'' value -> count
    f_max: int
    beta: int
    beta_prime: int
    tie_policy: str
    merge_policy: str
    phase1: Phase1Result | None
    distribution: Distribution | None
    groups: list[dict[str, int]]  # final groups after the T'' distribution (before merging)
    subtables: list[SubTable]  # parameters of the partition (after merging, if any)
    merge_steps: list[MergeStep]
    whole_table: SubTable | None
    status: str
    reason: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    @property
    def t_prime_size(self) -> int:
        return self.n - sum(self.t2.values())

    @property
    def sa_prime_is_all(self) -> bool:
        return not self.t2

    @property
    def refused(self) -> bool:
        return self.status in (STATUS_REFUSED, STATUS_BETA_ONE)

    @property
    def lemma5(self) -> tuple[Fraction | None, Fraction | None]:
        return lemma5_bounds(self.beta, self.beta_prime) if self.t2 else (None, None)

    def publishable(self, accept_fallback: bool = False) -> list[SubTable]:
        """The sub-tables that may be perturbed and published; raises InputError on a refusal."""
        if self.status == STATUS_OK:
            return self.subtables
        if self.status == STATUS_NOTHING:
            raise InputError(
                "no value is rare enough to need protection (SA' is empty): PP does not run. "
                "Publishing the table unperturbed needs an explicit confirmation."
            )
        if accept_fallback:
            return [self.whole_table]
        raise InputError(
            f"{self.reason} Nothing was published. Accept the single-table fallback "
            f"(p = {self.whole_table.p}; CLI: --accept-fallback) or raise rho2."
        )


def plan_partition(
    counts: Mapping[str, int],
    rho1: Fraction,
    rho2: Fraction,
    *,
    canonical: Sequence[str] | None = None,
    tie_policy: str = "stable",
    merge_policy: str = "none",
    keep_orders: bool | None = None,
) -> PartitionPlan:
    """Run PP on per-value counts. `canonical` fixes the initial order (default: natural sort)."""
    validate_rhos(rho1, rho2)
    if tie_policy not in TIE_POLICIES:
        raise InputError(
            f"unknown tie policy {tie_policy!r}; use one of {', '.join(TIE_POLICIES)}."
        )
    if merge_policy not in MERGE_POLICIES:
        raise InputError(
            f"unknown merge policy {merge_policy!r}; use one of {', '.join(MERGE_POLICIES)}."
        )
    clean = validate_counts(counts)
    order = canonical_order(clean, canonical)
    clean = {v: clean[v] for v in order}
    n = sum(clean.values())
    sa_prime = [v for v in order if Fraction(clean[v], n) <= rho1]
    sa_set = set(sa_prime)
    t2 = {v: c for v, c in clean.items() if v not in sa_set}
    common = dict(
        rho1=rho1,
        rho2=rho2,
        counts=clean,
        canonical=order,
        canonical_given=canonical is not None,
        sa_prime=sa_prime,
        t2=t2,
        tie_policy=tie_policy,
        merge_policy=merge_policy,
    )
    if not sa_prime:
        return PartitionPlan(
            **common,
            f_max=0,
            beta=0,
            beta_prime=0,
            phase1=None,
            distribution=None,
            groups=[],
            subtables=[],
            merge_steps=[],
            whole_table=None,
            status=STATUS_NOTHING,
            reason=(
                f"every value has relative frequency above rho1 = {rho1}, so SA' is empty and "
                "no value needs protection; PP does not run."
            ),
        )
    f_max = max(clean[v] for v in sa_prime)
    beta = n // f_max
    t_prime = {v: clean[v] for v in sa_prime}
    n_prime = sum(t_prime.values())
    beta_prime = n_prime // f_max
    phase1 = balance(t_prime, beta_prime, order, tie_policy, keep_orders=keep_orders)
    if phase1.violations:
        raise RuntimeError("Phase 1 invariant violated: " + "; ".join(phase1.violations))
    before = phase1.groups
    whole_bound, other_bound = lemma5_bounds(beta, beta_prime) if t2 else (None, None)
    dist = None
    if t2:
        dist = distribute([sum(g.values()) for g in before], t2, order)
        n2 = sum(t2.values())
        groups = []
        bounds = []
        for g, got in zip(before, dist.received, strict=True):
            merged = {**g}
            for v, c in got.items():
                merged[v] = merged.get(v, 0) + c
            groups.append(merged)
            whole = sum(g.values()) * n2 % n_prime == 0
            bounds.append(whole_bound if whole else other_bound)
    else:
        groups = [dict(g) for g in before]
        bounds = [Fraction(1, beta)] * len(groups)
    pos = {v: i for i, v in enumerate(order)}
    groups = [dict(sorted(g.items(), key=lambda kv: pos[kv[0]])) for g in groups]
    subtables = [
        subtable_params(g, sa_set, rho2, bound=b) for g, b in zip(groups, bounds, strict=True)
    ]
    steps: list[MergeStep] = []
    if merge_policy == "utility" and beta > 1:
        subtables, steps = merge_utility(subtables, sa_set, rho2, order)
    whole_table = subtable_params(clean, sa_set, rho2)
    plan = PartitionPlan(
        **common,
        f_max=f_max,
        beta=beta,
        beta_prime=beta_prime,
        phase1=phase1,
        distribution=dist,
        groups=groups,
        subtables=subtables,
        merge_steps=steps,
        whole_table=whole_table,
        status=STATUS_OK,
    )
    if beta == 1:
        plan.status, plan.reason = STATUS_BETA_ONE, BETA_ONE_MESSAGE
    else:
        bad = [(i, s) for i, s in enumerate(subtables, 1) if not s.admissible]
        if bad:
            listed = ", ".join(f"g{i} (rho1_i = {s.rho1} >= rho2 = {rho2})" for i, s in bad)
            plan.status = STATUS_REFUSED
            plan.reason = (
                f"The partition is refused: {listed} cannot be protected, because an attacker "
                "who knows a record's sub-table already believes its value with at least rho2."
            )
    if t2 and beta_prime == 1:
        plan.notes.append("beta' = 1: Lemma-5 bound n/a; every sub-table was checked directly.")
    return plan
