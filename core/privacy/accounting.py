"""Composing everything a dataset has released: `basic` (sums of ε and of δ) or `pld` (privacy
loss distributions, Google's `dp-accounting` — the library PipelineDP uses).

A dataset's owner chooses its accounting at registration (`core.registry`). The accountant
reads each mechanism's privacy loss profile (`Mechanism.loss()`, a `PrivacyLoss`) and composes:

- **basic**: (Σε, Σδ). Valid for any sequence of (adaptively chosen) (εᵢ, δᵢ)-DP mechanisms.
- **pld**, at the dataset's total δ = D. Privacy claims, each a theorem we rely on:

  1. Every ε-DP mechanism is dominated by ε-randomized response, the pair P = (e^ε, 1)/(1+e^ε),
     Q = (1, e^ε)/(1+e^ε) (Kairouz, Oh, Viswanath 2015, Thm 2.4); composing those pairs is the
     optimal composition of the ε claims (their Thm 3.3). `dp-accounting` builds that pair's
     PLD (`from_privacy_parameters(ε, 0)`) with a *pessimistic* discretisation, so the ε it
     returns at a δ is an upper bound on the optimal one. We use that pair for every profile
     with ε > 0 — Laplace, discrete Laplace, lattice Laplace, the exponential mechanism,
     recorded rows — i.e. we rely only on each mechanism's ε claim, never on its noise shape.
     For a discrete Laplace of sensitivity 1 the pair is exact (its loss is ±ε); for
     continuous Laplace a Laplace-specific PLD would be ~2 % tighter (100 × ε 0.1 at δ 1e-6:
     4.69 against 4.77) but needs a dominating-pair argument for vectors of statistics that we
     do not make here.
  2. An (ε, δ)-DP mechanism (δ > 0, e.g. noisy-threshold partition selection) is dominated by
     the (ε, δ) pair, which is the δ-mixture of a "reveal" outcome and ε-randomized response;
     so composing it costs at most its ε-pair inside the PLD plus its δ on top (the hockey
     stick divergence of a product with a δ-mixture is at most δ plus that of the rest).
     Hence: ε-part in the PLD, δ added basically (Σδ of the approximate claims, `delta_claims`).
  3. The composed guarantee is (ε_pld(D − Σδ), D) with ε_pld the PLD's ε at δ = D − Σδ
     (`inf` when Σδ ≥ D: no pld guarantee). Basic gives (Σε, Σδ), hence (Σε, D) when Σδ ≤ D.
     Both are valid statements at the same δ = D, so the smaller ε is valid: the pld figure is
     min(Σε, ε_pld) and never exceeds basic.
  4. ε values are rounded *up* to 4 significant digits before grouping (an ε-DP mechanism is
     ε'-DP for every ε' ≥ ε): at most 0.1 % looser, and mechanisms of one ε compose in one
     `self_compose`.

  5. Gaussian losses (`LossKind.GAUSSIAN`, the discrete Gaussian of `core.privacy.gaussian`)
     are ρ-zCDP, ρ = Δ2²/(2σ²), and zCDP composes by adding ρ (Bun, Steinke 2016). Beside the
     figure of claims 1-3 (where a Gaussian enters as its own (ε, δ) claim), pld then also
     computes, with s = D − Σδ of the *non-Gaussian* approximate claims:
     (a) everything in zCDP: ρ = Σρ_gauss + Σ ε²/2 of the other ε-parts (an ε-DP mechanism is
         ε²/2-zCDP, Bun-Steinke Prop. 1.4), ε = `zcdp_epsilon(ρ, s)` (CKS 2020 Cor. 13, the
         conversion OpenDP implements);
     (b) the Gaussians in zCDP and the rest in the PLD, joined by basic composition of the two
         groups with s split between them: ε = ε_pld(t·s) + ε_zcdp(Σρ_gauss, (1 − t)·s),
         minimised over a fixed grid of t.
     Each is a valid (ε, D) statement, so the smallest of them and basic is. When (a) or (b) is
     the smallest, the δ it consumes is Σδ of the non-Gaussian claims only (`spent`).

PP's randomization states a (ρ1, ρ2) claim and no (ε, δ) (`LossKind.NONE`): it composes to
nothing here; its (ρ1, ρ2) claim stays its own. With D = 0 (a pure-DP budget) pld equals basic.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from core.privacy.cost import Cost
from core.privacy.gaussian import zcdp_epsilon
from core.privacy.mechanisms import LossKind, Mechanism, PrivacyLoss

VALUE_DISCRETIZATION = 1e-4  # dp-accounting's loss grid (pessimistic: an upper bound)
_SIGNIFICANT = 4  # ε rounded up to this many significant digits before grouping
# claim 5(b): the share of the δ slack given to the Gaussians' zCDP group
_GAUSSIAN_SHARES = (0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99)


class Accounting(StrEnum):
    """How a dataset composes its releases (chosen at registration, fixed after a release)."""

    BASIC = "basic"  # Σε, Σδ
    PLD = "pld"  # privacy loss distributions (dp-accounting), never above basic

    @property
    def words(self) -> str:
        if self is Accounting.BASIC:
            return "basic (sums of epsilon and of delta)"
        return (
            "pld (privacy loss distributions, dp-accounting: epsilon at the dataset's total "
            "delta, never above basic)"
        )


@dataclass(frozen=True)
class Composition:
    """What a set of losses composes to under one accounting, at the target δ `delta_total`.

    `epsilon` is the composed ε; the guarantee is (`epsilon`, `delta`). `spent` is what a
    budget check reads: (composed ε, Σδ of the approximate claims) — the rest of the total δ is
    the slack that pld's ε is computed at."""

    accounting: Accounting
    epsilon: float
    delta: float
    basic: Cost
    pld_epsilon: float | None  # the PLD's ε at delta_total − Σδ (None under basic)
    delta_total: float
    count: int  # the losses composed (with ε > 0 or δ > 0)
    # the δ of approximate claims the guarantee consumes (None: all of them, basic.delta);
    # less when Gaussians compose in zCDP (claim 5)
    consumed_delta: float | None = None
    method: str = ""  # which figure holds: "basic", "pld", "zcdp" or "pld+zcdp"

    @property
    def delta_claims(self) -> float:
        return self.basic.delta if self.consumed_delta is None else self.consumed_delta

    @property
    def spent(self) -> Cost:
        return Cost(self.epsilon, min(self.delta_claims, 1 - 1e-300))

    @property
    def uses_pld(self) -> bool:
        """True when the pld figure is below basic (the guarantee is then at `delta_total`)."""
        return self.pld_epsilon is not None and self.pld_epsilon < self.basic.epsilon


def _rounded_up(eps: float) -> float:
    """`eps` rounded up to `_SIGNIFICANT` significant digits, never below `eps`."""
    if not eps > 0:
        return 0.0
    q = 10.0 ** (math.floor(math.log10(eps)) - _SIGNIFICANT + 1)
    r = float(f"{math.ceil(eps / q - 1e-9) * q:.{_SIGNIFICANT + 2}g}")
    return r if r >= eps else eps


def warm() -> None:
    """Import dp-accounting now (about 2 s the first time), e.g. before taking a write lock."""
    from dp_accounting.pld import privacy_loss_distribution  # noqa: F401


@lru_cache(maxsize=64)
def _composed_pld(groups: tuple[tuple[float, int], ...]):
    """The composition of `count` ε-randomized-response pairs per (ε, count) group
    (dp-accounting, pessimistic discretisation)."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = None
    for eps, count in groups:
        one = pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(eps, 0.0),
            value_discretization_interval=VALUE_DISCRETIZATION,
        )
        part = one.self_compose(count) if count > 1 else one
        total = part if total is None else total.compose(part)
    return total


@lru_cache(maxsize=256)
def _pld_epsilon(groups: tuple[tuple[float, int], ...], delta: float) -> float:
    """ε of `_composed_pld(groups)` at δ."""
    return float(_composed_pld(groups).get_epsilon_for_delta(delta))


def pld_epsilon(losses: Iterable[PrivacyLoss], delta: float) -> float:
    """The PLD's ε at δ for the ε-parts of `losses` (claim 1 of the module): inf when δ <= 0
    and some ε > 0 (no pure-DP guarantee is tighter than Σε at δ = 0: basic covers it)."""
    eps = [_rounded_up(x.epsilon) for x in losses if x.epsilon > 0]
    if not eps:
        return 0.0
    if not delta > 0:
        return math.inf
    groups = tuple(sorted(Counter(eps).items()))
    return _pld_epsilon(groups, float(delta))


def composition(
    losses: Iterable[PrivacyLoss | Mechanism],
    delta_total: float,
    accounting: Accounting | str = Accounting.PLD,
) -> Composition:
    """Compose `losses` (profiles, or mechanisms whose `loss()` is read) under `accounting`,
    at the target δ `delta_total` (the dataset's total δ). See the module for the claims."""
    accounting = Accounting(accounting)
    items = [x.loss() if isinstance(x, Mechanism) else x for x in losses]
    items = [x for x in items if x.kind is not LossKind.NONE and (x.epsilon or x.delta)]
    basic = Cost(
        math.fsum(x.epsilon for x in items), min(math.fsum(x.delta for x in items), 1 - 1e-300)
    )
    if accounting is Accounting.BASIC:
        return Composition(accounting, basic.epsilon, basic.delta, basic, None, delta_total,
                           len(items), None, "basic")  # fmt: skip
    slack = float(delta_total) - basic.delta
    found = pld_epsilon(items, slack) if slack > 0 else math.inf
    consumed, method = None, "pld"
    gaussian = [x for x in items if x.kind is LossKind.GAUSSIAN]
    if gaussian:
        others = [x for x in items if x.kind is not LossKind.GAUSSIAN]
        other_delta = math.fsum(x.delta for x in others)
        zcdp, how = _with_zcdp(gaussian, others, float(delta_total) - other_delta)
        if zcdp < found:
            found, consumed, method = zcdp, other_delta, how
    if found < basic.epsilon:
        return Composition(accounting, found, float(delta_total), basic, found, delta_total,
                           len(items), consumed, method)  # fmt: skip
    return Composition(accounting, basic.epsilon, basic.delta, basic, found, delta_total,
                       len(items), None, "basic")  # fmt: skip


def _with_zcdp(
    gaussian: list[PrivacyLoss], others: list[PrivacyLoss], slack: float
) -> tuple[float, str]:
    """Claim 5: the smaller of (a) everything in zCDP and (b) Gaussians in zCDP + the rest in
    the PLD, at the δ slack `slack` left by the non-Gaussian approximate claims."""
    if not slack > 0:
        return math.inf, ""
    rho_gauss = math.fsum(x.rho for x in gaussian)
    pure = [x for x in others if x.epsilon > 0]
    rho_all = rho_gauss + math.fsum(x.epsilon**2 / 2 for x in pure)
    best, how = zcdp_epsilon(rho_all, slack), "zcdp"
    if pure:
        for share in _GAUSSIAN_SHARES:
            split = pld_epsilon(pure, (1 - share) * slack) + zcdp_epsilon(rho_gauss, share * slack)
            if split < best:
                best, how = split, "pld+zcdp"
    return best, how


def compose(
    losses: Iterable[PrivacyLoss | Mechanism],
    delta: float,
    accounting: Accounting | str = Accounting.PLD,
) -> tuple[float, float]:
    """(ε, δ) of everything in `losses` under `accounting`: basic gives (Σε, Σδ); pld gives
    (ε, `delta`) with ε = min(Σε, PLD ε at `delta` − Σδ) when the PLD is below basic, else
    basic's (Σε, Σδ)."""
    c = composition(losses, delta, accounting)
    return c.epsilon, c.delta


def losses_of(mechanisms: Iterable[Mechanism], charged: Cost) -> list[PrivacyLoss]:
    """The profiles to compose for one charged release: its mechanisms' `loss()`, plus any part
    of the charge they do not account for (a release charged by cost alone, or one that drew
    less than it was charged: the charge stands), as a bare (ε, δ) claim. A release with a
    mechanism standing `in_place_of` others (disjoint parts of the data) is composed as its
    whole charge, one (ε, δ) claim — its basic guarantee."""
    mechanisms = tuple(mechanisms)
    if not mechanisms or any(m.in_place_of for m in mechanisms):
        return [PrivacyLoss.of_cost(charged)]
    out = [m.loss() for m in mechanisms]
    rest_e = charged.epsilon - math.fsum(x.epsilon for x in out)
    rest_d = charged.delta - math.fsum(x.delta for x in out)
    if rest_e > 1e-12 or rest_d > 1e-18:
        out.append(PrivacyLoss.of_cost(Cost(max(0.0, rest_e), max(0.0, rest_d))))
    return out
