"""Property-based invariants (spec section 5) and the exhaustive 923-vector regression."""

from __future__ import annotations

from fractions import Fraction as F
from itertools import combinations_with_replacement

from hypothesis import given, settings
from hypothesis import strategies as st

from core.balancing.invariants import check_phase1, check_plan
from core.balancing.phase1 import balance, closed_form_h, equation_22, iter_orders, order_at
from core.balancing.plan import STATUS_NOTHING, plan_partition

count_vectors = st.lists(st.integers(1, 30), min_size=2, max_size=12)


def as_counts(values: list[int]) -> dict[str, int]:
    return {f"v{i}": c for i, c in enumerate(values, 1)}


def check_lemma_bounds(plan) -> None:
    """Lemma 4 for SA' = SA; Lemma 5 after the T'' distribution wherever defined."""
    whole, other = plan.lemma5
    for s, g in zip(plan.subtables, plan.groups, strict=True):
        assert s.counts == g
        if plan.sa_prime_is_all:
            assert plan.beta * max(g.values()) <= sum(g.values())
        elif s.bound is not None:
            assert s.bound in (whole, other)
            assert s.rho1 <= s.bound


@settings(max_examples=200, deadline=None)
@given(count_vectors)
def test_invariants_sa_prime_equals_sa(values):
    c = as_counts(values)
    n, fmax = sum(values), max(values)
    rho1 = F(fmax, n)  # the smallest rho1 with SA' = SA
    plan = plan_partition(c, rho1, (1 + rho1) / 2)
    assert plan.sa_prime_is_all and plan.beta == n // fmax
    assert check_plan(plan) == []
    check_lemma_bounds(plan)
    # shape: h > 0 groups have exactly beta values with h each; the h = 0 group is last
    for row in plan.phase1.trace:
        if row.h:
            assert len(row.group) == plan.beta and set(row.group.values()) == {row.h}
        else:
            assert row.j == len(plan.phase1.trace) and len(row.group) > plan.beta
    if plan.beta >= 2:
        assert all(s.rho1 <= F(1, plan.beta) for s in plan.subtables)


@settings(max_examples=200, deadline=None)
@given(count_vectors, st.integers(1, 99))
def test_invariants_with_random_rho1(values, percent):
    c = as_counts(values)
    rho1 = F(percent, 100)
    plan = plan_partition(c, rho1, (1 + rho1) / 2)
    if plan.status == STATUS_NOTHING:
        assert all(F(v, sum(values)) > rho1 for v in values)
        return
    assert check_plan(plan) == []
    check_lemma_bounds(plan)
    if plan.distribution is not None:
        d = plan.distribution
        assert sum(d.quotas) + d.residue == sum(plan.t2.values())
        assert 0 <= d.residue <= len(d.quotas) - 1
        # every T'' value is more frequent than every SA' value
        assert min(plan.t2.values()) > plan.f_max
    if plan.beta == 1:
        assert plan.sa_prime_is_all and plan.refused


@settings(max_examples=150, deadline=None)
@given(count_vectors)
def test_tie_policies_agree_on_everything_but_contents(values):
    c = as_counts(values)
    rho1 = F(max(values), sum(values))
    a = plan_partition(c, rho1, (1 + rho1) / 2)
    b = plan_partition(c, rho1, (1 + rho1) / 2, tie_policy="value_order")
    assert a.phase1.h_sequence == b.phase1.h_sequence
    assert [sum(g.values()) for g in a.groups] == [sum(g.values()) for g in b.groups]
    assert check_plan(b) == []


@settings(max_examples=100, deadline=None)
@given(count_vectors, st.integers(1, 99))
def test_tie_policies_agree_on_quotas(values, percent):
    c = as_counts(values)
    rho1 = F(percent, 100)
    a = plan_partition(c, rho1, (1 + rho1) / 2)
    b = plan_partition(c, rho1, (1 + rho1) / 2, tie_policy="value_order")
    if a.distribution is not None:
        assert a.distribution.quotas == b.distribution.quotas
        assert a.distribution.residue == b.distribution.residue


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 60), st.integers(1, 5), st.integers(0, 30), st.integers(0, 30))
def test_equation_22_equals_closed_form(n0, beta, f1_minus_fb, fb1):
    """On any balanced state (beta*f1 <= n0, f_beta+1 <= f_beta <= f1) both give the same h."""
    fb = fb1 + (n0 % 7)
    f1 = fb + f1_minus_fb
    if fb == 0 or beta * f1 > n0 or beta * fb1 > n0:
        return
    _, _, h22 = equation_22(n0, beta, f1, fb, fb1)
    assert h22 == closed_form_h(n0, beta, fb, fb1)


@settings(max_examples=50, deadline=None)
@given(count_vectors)
def test_orders_rebuilt_by_replay_match_stored(values):
    c = as_counts(values)
    beta = sum(values) // max(values)
    for policy in ("stable", "value_order"):
        stored = balance(c, beta, list(c), policy, keep_orders=True)
        replay = balance(c, beta, list(c), policy, keep_orders=False)
        assert [order_at(replay, r.j) for r in replay.trace] == [r.order for r in stored.trace]
        assert list(iter_orders(replay)) == [r.order for r in stored.trace]


def exhaustive_vectors():
    for k in range(1, 7):
        yield from combinations_with_replacement(range(6, 0, -1), k)


def test_exhaustive_923_vectors():
    vectors = list(exhaustive_vectors())
    assert len(vectors) == 923
    with_h0 = differ = 0
    for v in vectors:
        labels = [f"v{i}" for i in range(1, len(v) + 1)]
        c = dict(zip(labels, v, strict=True))
        beta = sum(v) // v[0]
        a = balance(c, beta, labels, "stable")
        b = balance(c, beta, labels, "value_order")
        assert check_phase1(a) == [] and check_phase1(b) == []
        assert a.h_sequence == b.h_sequence
        with_h0 += any(r.h == 0 for r in a.trace)
        differ += a.groups != b.groups
    assert with_h0 == 512
    assert differ == 9


def test_checkpointed_replay_matches_stored_orders_on_many_iterations():
    """Above KEEP_ORDERS_MAX_VALUES the orders are rebuilt from checkpoints; they must agree."""
    weights = [1200 // r for r in range(1, 301)]
    c = {f"v{i}": w for i, w in enumerate(weights, 1)}
    beta = sum(weights) // max(weights)
    for policy in ("stable", "value_order"):
        stored = balance(c, beta, list(c), policy, keep_orders=True)
        replay = balance(c, beta, list(c), policy, keep_orders=False)
        assert len(stored.trace) > 64 and replay.checkpoints
        for j in (1, 2, 33, 34, 40, 65, len(stored.trace)):
            assert order_at(replay, j) == stored.trace[j - 1].order
        assert list(iter_orders(replay)) == [r.order for r in stored.trace]
