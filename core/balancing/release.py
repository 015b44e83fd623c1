"""The partition plan a PP release publishes, made from DP-noised value counts.

WHY THE PUBLISHED PARTITION IS COVERED (the README's section of the same name says it in prose).

Neighbouring tables differ in ONE RECORD'S SA VALUE (the unit of a PP release; its other columns
are the same). Thesis Phase 1 on the exact counts makes the sub-table sizes, domains and the
canonical order exact functions of the counts, so changing one record's value can change them
deterministically and an attacker who knows the other records reads the value off the sizes
(issue 16: sizes [150, 100, 50] vs [134, 67, 63, 30, 6], posterior 1 against rho2 = 0.5).

1. The plan is (epsilon, delta)-DP. The count vector of the candidate values moves by at most 2
   in L1 between neighbours (one count -1, another +1), so adding i.i.d. discrete Laplace noise
   of scale 2/epsilon to each count (`DiscreteLaplace`, sensitivity 2) is epsilon-DP when the
   candidates are public: the owner's declared categories (delta = 0). Without them the
   candidates are the values that occur, which no pure-epsilon mechanism may list (a value held
   by one record alone would appear only when that record holds it), so a value is kept only
   when its noisy count reaches a threshold tau (`NoisyThreshold` reusing the same noisy counts,
   no new epsilon): a value held by one record survives with probability at most
   delta = P(1 + Z >= tau) (default <= 1e-6), the delta of the release. Everything the plan
   holds is computed from the kept noisy counts and public parameters only: clipping at 0, SA',
   beta, Phase 1, the T'' distribution, merging, sub-table sizes, domains D_i, canonical order,
   rho1_i, gamma_i, p_i, q_i and the refusal/fallback decision. Post-processing keeps it.
2. The rows depend on the plan and per-record randomness only (`core.balancing.assign`):
   - SA alone published: the table is built from the plan's slots (s_i(x) rows of value x in
     sub-table i), each perturbed within its sub-table. It holds no record, so the WHOLE
     publication is (epsilon, delta)-DP: any attacker's odds on a record's value move by at
     most e^epsilon (but for probability delta), and a prior <= rho1 stays <= rho2 whenever
     e^epsilon <= gamma = rho2(1 - rho1) / (rho1(1 - rho2)) (`posterior_after_plan`).
   - SA plus owner-declared columns: every record's row is published (linkable through those
     columns). Each record draws its sub-table on its own, P(i | x) = s_i(x) / c~(x), then keeps
     its value with p_i or takes a uniform value of D_i. Given the plan the rows are
     independent and each depends only on its own record's value, so
     P(release | T) = P(plan | T) * prod_r P(row_r | plan, x_r): the plan and every other row
     (the sub-table sizes with record r's row set aside) move by at most e^epsilon, and record
     r's own row is PP's per-record randomization given the plan - an attacker whose belief is
     the plan's distribution c~(x)/n~ believes s_i(x)/n~_i <= rho1_i after seeing the sub-table
     and at most gamma_i rho1_i / (gamma_i rho1_i + 1 - rho1_i) = rho2 after the value (PP's
     stated limits apply: D_i reveals "SA in D_i").

The release's claim is therefore ((rho1, rho2) per record) + ((epsilon, delta) for the plan,
unit: one record's SA value; delta = 0 with declared categories). The faithful exact plan (`core.balancing.plan.plan_partition` on exact
counts) remains for the owner's teaching and evaluation views; it is never published.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from core.balancing.merge import MERGE_POLICIES
from core.balancing.params import natural_key, validate_rhos
from core.balancing.phase1 import TIE_POLICIES
from core.balancing.plan import STATUS_NOTHING, STATUS_OK, PartitionPlan, plan_partition
from core.balancing.records import MISSING_POLICIES, MissingPolicy
from core.balancing.subtables import SubTable, gamma_for
from core.errors import InputError
from core.privacy import (
    Accountant,
    Cost,
    DiscreteLaplace,
    Mechanism,
    NoisyThreshold,
    PPRandomization,
    RhoClaim,
)
from core.privacy.cost import EPSILON_MIN

DEFAULT_PLAN_EPSILON = 1.0
DEFAULT_SELECTION_DELTA = 1e-6
PLAN_LABEL = "pp: SA value counts for the partition plan"
SELECT_LABEL = "pp: SA values kept in the plan (noisy count >= threshold)"
COUNT_SENSITIVITY = 2  # one record's SA value changes: one count -1, another +1
PLAN_UNIT = "one record's SA value (neighbouring tables differ in one record's sensitive value)"


@dataclass(frozen=True)
class ReleaseSettings:
    """The public parameters of a PP release (what the caller charges and records)."""

    rho1: Fraction
    rho2: Fraction
    plan_epsilon: float = DEFAULT_PLAN_EPSILON
    tie_policy: str = "stable"
    merge_policy: str = "none"
    missing: MissingPolicy = "error"
    accept_fallback: bool = False
    categories: tuple[str, ...] | None = None  # the SA's public value list, when declared
    selection_delta: float = DEFAULT_SELECTION_DELTA  # without categories: values kept by threshold

    def __post_init__(self):
        validate_rhos(Fraction(self.rho1), Fraction(self.rho2))
        eps = self.plan_epsilon
        if isinstance(eps, bool) or not (isinstance(eps, (int, float)) and math.isfinite(eps)):
            raise InputError(f"the plan's epsilon must be a number > 0, got {eps!r}.")
        if eps <= 0:
            raise InputError(
                f"the plan's epsilon must be > 0, got {eps}: the partition plan is made from "
                "noisy counts (e.g. --plan-epsilon 1)."
            )
        if eps < EPSILON_MIN:  # its noise would be beyond what can be drawn (it hung)
            raise InputError(
                f"the plan's epsilon {eps:g} is below the smallest ε any release takes "
                f"({EPSILON_MIN:g}). Fix: give --plan-epsilon {EPSILON_MIN:g} or more."
            )
        if self.tie_policy not in TIE_POLICIES:
            raise InputError(f"unknown tie policy {self.tie_policy!r}; use stable or value_order.")
        if self.merge_policy not in MERGE_POLICIES:
            raise InputError(f"unknown merge policy {self.merge_policy!r}; use none or utility.")
        if self.missing not in MISSING_POLICIES:
            raise InputError(
                f"unknown missing-value policy {self.missing!r}: use drop or category."
            )
        if self.categories is not None:
            cats = tuple(str(c) for c in self.categories)
            if len(set(cats)) != len(cats) or len(cats) < 2:
                raise InputError(
                    "the declared SA categories must list at least two distinct values, each once."
                )
            object.__setattr__(self, "categories", cats)
        d = self.selection_delta
        if not (isinstance(d, (int, float)) and 0 < d < 0.5):
            raise InputError(f"the value-selection delta must be in (0, 0.5), got {d!r}.")
        object.__setattr__(self, "rho1", Fraction(self.rho1))
        object.__setattr__(self, "rho2", Fraction(self.rho2))
        object.__setattr__(self, "plan_epsilon", float(eps))

    @property
    def claim(self) -> RhoClaim:
        return RhoClaim(self.rho1, self.rho2)

    @property
    def plan_mechanism(self) -> DiscreteLaplace:
        """The one ε-charged mechanism of a PP release: discrete Laplace on the value counts."""
        return DiscreteLaplace(PLAN_LABEL, sensitivity=COUNT_SENSITIVITY, epsilon=self.plan_epsilon)

    @property
    def selection_mechanism(self) -> NoisyThreshold | None:
        """Without declared categories: keep a value only when its noisy count reaches τ, the
        smallest threshold with P(1 + Z >= τ) <= `selection_delta` (reuses the plan's noise)."""
        if self.categories is not None:
            return None
        scale = COUNT_SENSITIVITY / self.plan_epsilon
        q = math.exp(-1.0 / scale)
        t = max(1, math.ceil(-scale * math.log(self.selection_delta * (1 + q))))  # τ - 1
        while math.exp(-t / scale) / (1 + q) > self.selection_delta:  # float guard
            t += 1
        return NoisyThreshold(
            SELECT_LABEL,
            sensitivity=COUNT_SENSITIVITY,
            epsilon=0.0,
            delta=math.exp(-t / scale) / (1 + q),
            threshold=t + 1,
            reuses=PLAN_LABEL,
            noise_scale=scale,
        )

    @property
    def charged_mechanisms(self) -> list[Mechanism]:
        """The mechanisms a PP release charges before reading data (the randomization of the
        rows costs no ε): the plan's noisy counts and, without declared categories, the
        threshold that selects which values are listed."""
        select = self.selection_mechanism
        return [self.plan_mechanism] + ([select] if select is not None else [])

    @property
    def cost(self) -> Cost:
        """What a PP release charges: (ε, δ) of `charged_mechanisms`."""
        return Cost.of(self.charged_mechanisms)


def posterior_after_plan(prior: Fraction | float, epsilon: float) -> float:
    """The largest posterior of a value with `prior` after an ε-DP publication: odds x e^ε."""
    p = float(prior)
    return p * math.exp(epsilon) / (p * math.exp(epsilon) + 1 - p)


def plan_epsilon_within_claim(rho1: Fraction, rho2: Fraction) -> float:
    """ln γ for the user's (ρ1, ρ2): the largest plan ε keeping a prior ≤ ρ1 at most ρ2 after
    the ε-DP part alone (the SA-only publication)."""
    return math.log(gamma_for(Fraction(rho1), Fraction(rho2)))


@dataclass(frozen=True)
class ReleasePlan:
    """The published plan: Phase 1 etc. on the noisy counts, and the sub-tables to perturb."""

    plan: PartitionPlan  # on the noisy counts (post-processing of an ε-DP statistic)
    noisy_counts: dict[str, int]  # every candidate value -> its noisy count, clipped at 0
    categories_source: str  # "declared" or "data"
    subtables: tuple[SubTable, ...]  # the partition's sub-tables, or the single-table fallback
    mechanisms: tuple[PPRandomization, ...]  # one per sub-table, same order
    fallback: bool

    @property
    def planned_counts(self) -> dict[str, int]:
        """The values with at least one planned slot (noisy count > 0)."""
        return {v: c for v, c in self.noisy_counts.items() if c > 0}


def release_plan(
    counts: Mapping[str, int], settings: ReleaseSettings, accountant: Accountant
) -> ReleasePlan:
    """Draw the noisy counts through `settings.plan_mechanism` and plan the partition on them.

    Privacy claim: (ε, δ)-DP (ε = settings.plan_epsilon, discrete Laplace of scale 2/ε on each
    candidate value's count, sensitivity 2 for one record's SA value; δ = 0 with declared
    categories, else the threshold's δ); everything returned is post-processing of the kept noisy
    counts and public settings. `counts` are the exact private
    counts (value label -> count); with declared categories a value outside them gets no slot.
    Raises InputError (after the draw: the charge stands) when the noisy plan cannot be used."""
    if settings.categories is not None:
        candidates = list(settings.categories)
        source = "declared"
    else:
        candidates = sorted((str(v) for v in counts), key=natural_key)
        source = "data"
    true = np.array([int(counts.get(v, 0)) for v in candidates], dtype=np.int64)
    noisy = settings.plan_mechanism.draw(accountant, true)
    select = settings.selection_mechanism
    kept = noisy > 0 if select is None else select.select(accountant, noisy)
    noisy_counts = {  # declared categories are public: listed even at 0; else the kept values
        v: max(0, int(c))
        for v, c, keep in zip(candidates, noisy.tolist(), kept.tolist(), strict=True)
        if keep or select is None
    }
    positive = {v: c for v, c in noisy_counts.items() if c > 0}
    if len(positive) < 2:
        raise InputError(
            "after the plan's noise fewer than two SA values have a positive count, so there is "
            "nothing to balance. Use a larger table, fewer categories or a larger plan epsilon."
        )
    plan = plan_partition(
        positive,
        settings.rho1,
        settings.rho2,
        tie_policy=settings.tie_policy,
        merge_policy=settings.merge_policy,
    )
    if plan.status == STATUS_NOTHING:
        raise InputError(
            f"no value is rare enough to need protection in the noisy plan (every noisy frequency "
            f"exceeds rho1 = {settings.rho1}): PP does not run. Lower rho1."
        )
    subtables, fallback = publishable_subtables(plan, settings.accept_fallback)
    mechanisms = subtable_mechanisms(subtables, settings.rho2)
    return ReleasePlan(
        plan=plan,
        noisy_counts=noisy_counts,
        categories_source=source,
        subtables=tuple(subtables),
        mechanisms=mechanisms,
        fallback=fallback,
    )


def subtable_mechanisms(
    subtables: Sequence[SubTable], rho2: Fraction
) -> tuple[PPRandomization, ...]:
    """One `PPRandomization` per sub-table, stating its ρ1ᵢ, retention pᵢ and domain size mᵢ
    (its posterior bound is γᵢρ1ᵢ/(γᵢρ1ᵢ + 1 - ρ1ᵢ) = ρ2, checked by the object itself)."""
    return tuple(
        PPRandomization(
            f"pp: sub-table {i} randomization",
            rho1=s.rho1,
            rho2=rho2,
            retention=s.p,
            domain_size=s.m,
        )
        for i, s in enumerate(subtables, 1)
    )


def posterior_check(subtables: Sequence[SubTable], rho2: Fraction) -> list[str]:
    """Section 6.3: the worst-case posterior implied by the p_i, q_i actually used, per sub-table.

    Recomputed from p and q (gamma = (p + q)/q), not read from a stored field, so a plan whose
    retention came from a global gamma (test T8) is caught here.
    """
    problems = []
    for i, s in enumerate(subtables, 1):
        if s.p is None or s.q is None:
            problems.append(f"g{i}: inadmissible (rho1_i = {s.rho1} >= rho2 = {rho2})")
            continue
        gamma = (s.p + s.q) / s.q
        posterior = gamma * s.rho1 / (gamma * s.rho1 + 1 - s.rho1)
        if posterior > rho2:
            problems.append(f"g{i}: worst posterior {posterior} > rho2 = {rho2}")
    return problems


def publishable_subtables(
    plan: PartitionPlan, accept_fallback: bool
) -> tuple[list[SubTable], bool]:
    """The sub-tables to perturb (or the single-table fallback) after the posterior check;
    raises InputError, nothing published, when the plan is refused."""
    subtables = plan.publishable(accept_fallback)
    fallback = plan.status != STATUS_OK
    problems = posterior_check(subtables, plan.rho2)
    if problems:
        raise InputError("refusing to publish: " + "; ".join(problems) + ". Nothing was published.")
    if any(s.p.denominator >= 2**63 for s in subtables):
        raise InputError(
            "the exact retention probabilities have denominators beyond 64-bit integers, so they "
            "cannot be sampled exactly. Nothing was published; type rho1 and rho2 with fewer "
            "digits (e.g. 1/3 instead of 0.3333333333333333333)."
        )
    return list(subtables), fallback
