"""Per-sub-table parameters (spec section 1.5-1.6): exact rho1_i, gamma_i, m_i, p_i, q_i.

gamma is computed per sub-table from its own rho1_i, never from the user's rho1: an adversary
who knows a record's sub-table has prior f_i(x)/n_i, which can exceed rho1 (test T8).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class SubTable:
    """One sub-table's counts and its perturbation parameters (all exact)."""

    counts: dict[str, int]  # value -> count, canonical order
    size: int
    m: int  # distinct SA values, non-SA' values included (they are in the domain)
    rho1: Fraction  # max over SA' values of f_i(x)/n_i
    gamma: Fraction
    admissible: bool  # rho1_i < rho2
    p: Fraction | None  # retention probability; None when inadmissible
    q: Fraction | None
    worst_posterior: Fraction | None
    bound: Fraction | None = None  # Lemma-4/5 bound on rho1_i, None = n/a

    @property
    def domain(self) -> list[str]:
        return list(self.counts)

    @property
    def kept_share(self) -> Fraction | None:
        """P(published value = original value) = p + q."""
        return None if self.p is None else self.p + self.q


def gamma_for(rho1_i: Fraction, rho2: Fraction) -> Fraction:
    """The largest amplification keeping every SA' posterior <= rho2: rho2(1-r)/(r(1-rho2))."""
    return rho2 * (1 - rho1_i) / (rho1_i * (1 - rho2))


def retention(gamma: Fraction, m: int) -> tuple[Fraction, Fraction]:
    """(p, q) for an at most gamma-amplifying uniform operator on m values (p + m*q = 1)."""
    q = 1 / (m - 1 + gamma)
    p = (gamma - 1) / (m - 1 + gamma)
    assert p + m * q == 1
    return p, q


def worst_posterior(gamma: Fraction, prior: Fraction) -> Fraction:
    """Worst-case posterior gamma*P / (gamma*P + 1 - P) for a value with prior P."""
    return gamma * prior / (gamma * prior + 1 - prior)


def subtable_params(
    counts: Mapping[str, int],
    sa_prime: Collection[str],
    rho2: Fraction,
    bound: Fraction | None = None,
) -> SubTable:
    """Parameters of one final sub-table; inadmissible (rho1_i >= rho2) gets p = None."""
    clean = {v: int(c) for v, c in counts.items() if c > 0}
    size = sum(clean.values())
    protected = [c for v, c in clean.items() if v in sa_prime]
    if not protected:
        raise ValueError("a sub-table without SA' values has nothing to protect (rho1_i = 0)")
    rho1_i = Fraction(max(protected), size)
    gamma = gamma_for(rho1_i, rho2)
    admissible = rho1_i < rho2
    p = q = post = None
    if admissible:
        p, q = retention(gamma, len(clean))
        post = worst_posterior(gamma, rho1_i)
    return SubTable(
        counts=clean,
        size=size,
        m=len(clean),
        rho1=rho1_i,
        gamma=gamma,
        admissible=admissible,
        p=p,
        q=q,
        worst_posterior=post,
        bound=bound,
    )


def utility(subtables: list[SubTable]) -> Fraction:
    """Sum of n_i * p_i (inadmissible sub-tables count 0): the merge objective of section 6.1."""
    return sum((s.size * s.p for s in subtables if s.p is not None), Fraction(0))


def lemma5_bounds(beta: int, beta_prime: int) -> tuple[Fraction | None, Fraction | None]:
    """(whole-number bound lambda/beta, otherwise lambda/(beta - lambda)); None where n/a."""
    if beta_prime < 2:
        return None, None
    lam = Fraction(beta_prime, beta_prime - 1)
    whole = lam / beta
    other = lam / (beta - lam) if beta > lam else None
    return whole, other
