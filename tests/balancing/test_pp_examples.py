"""Acceptance tests E6, E7 and T1-T9 (spec sections 4-5): full traces and exact parameters."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from core.balancing.invariants import check_plan
from core.balancing.plan import STATUS_BETA_ONE, STATUS_OK, STATUS_REFUSED, plan_partition
from core.balancing.subtables import gamma_for, retention, worst_posterior
from core.errors import InputError
from tests.balancing.pp_helpers import FIG9, assert_trace, counts, vector


def params(plan):
    return [(s.size, s.m, s.rho1, s.gamma, s.p) for s in plan.subtables]


# ---------------------------------------------------------------------------------------- E6
E6_TRACE = [
    (42, "x1:12 x2:8 x3:6 x4:5 x5:4 x6:3 x7:1 x8:1 x9:1 x10:1", "12 (x1)", "6 (x3)", "5 (x4)",
     8, "h=fb", 6, "x1:6 x2:6 x3:6", "24/6"),
    (24, "x1:6 x4:5 x5:4 x6:3 x2:2 x7:1 x8:1 x9:1 x10:1", "6 (x1)", "4 (x5)", "3 (x6)",
     5, "h=fb", 4, "x1:4 x4:4 x5:4", "12/3"),
    (12, "x6:3 x1:2 x2:2 x4:1 x7:1 x8:1 x9:1 x10:1", "3 (x6)", "2 (x2)", "1 (x4)",
     3, "h=fb", 2, "x6:2 x1:2 x2:2", "6/1"),
    (6, "x6:1 x4:1 x7:1 x8:1 x9:1 x10:1", "1 (x6)", "1 (x7)", "1 (x8)",
     1, "h=fb", 1, "x6:1 x4:1 x7:1", "3/1"),
    (3, "x8:1 x9:1 x10:1", "1 (x8)", "1 (x10)", "0",
     1, "h=fb", 1, "x8:1 x9:1 x10:1", "empty"),
]  # fmt: skip


def test_e6_example_6():
    plan = plan_partition(FIG9, F(1, 3), F(2, 3))
    assert plan.status == STATUS_OK
    assert plan.sa_prime == list(FIG9) and plan.t2 == {}
    assert (plan.f_max, plan.beta, plan.beta_prime) == (12, 3, 3)
    assert_trace(plan.phase1.trace, E6_TRACE)
    assert plan.groups == [
        vector([6, 6, 6, 0, 0, 0, 0, 0, 0, 0]),
        vector([4, 0, 0, 4, 4, 0, 0, 0, 0, 0]),
        vector([2, 2, 0, 0, 0, 2, 0, 0, 0, 0]),
        vector([0, 0, 0, 1, 0, 1, 1, 0, 0, 0]),
        vector([0, 0, 0, 0, 0, 0, 0, 1, 1, 1]),
    ]
    assert [s.size for s in plan.subtables] == [18, 12, 6, 3, 3]
    for s in plan.subtables:
        assert (s.m, s.rho1, s.gamma, s.p, s.q, s.worst_posterior) == (
            3,
            F(1, 3),
            4,
            F(1, 2),
            F(1, 6),
            F(2, 3),
        )
        assert s.bound == F(1, 3)  # Lemma 4: 1/beta
    w = plan.whole_table
    assert (w.rho1, w.gamma, w.m, w.p) == (F(2, 7), 5, 10, F(2, 7))
    assert check_plan(plan) == []


def test_e6_expected_kept_share_vs_whole_table():
    """Spec 6.5: 2/3 with sub-tables vs 5/14 for the whole table."""
    plan = plan_partition(FIG9, F(1, 3), F(2, 3))
    share = sum(s.size * s.kept_share for s in plan.subtables) / plan.n
    assert share == F(2, 3)
    assert plan.whole_table.kept_share == F(5, 14)


# ---------------------------------------------------------------------------------------- E7
E7_TRACE = [
    (30, "x2:8 x3:6 x4:5 x5:4 x6:3 x7:1 x8:1 x9:1 x10:1", "8 (x2)", "5 (x4)", "4 (x5)",
     6, "h=fb", 5, "x2:5 x3:5 x4:5", "15/4"),
    (15, "x5:4 x2:3 x6:3 x3:1 x7:1 x8:1 x9:1 x10:1", "4 (x5)", "3 (x6)", "1 (x3)",
     4, "h=fb", 3, "x5:3 x2:3 x6:3", "6/1"),
    (6, "x5:1 x3:1 x7:1 x8:1 x9:1 x10:1", "1 (x5)", "1 (x7)", "1 (x8)",
     1, "h=fb", 1, "x5:1 x3:1 x7:1", "3/1"),
    (3, "x8:1 x9:1 x10:1", "1 (x8)", "1 (x10)", "0",
     1, "h=fb", 1, "x8:1 x9:1 x10:1", "empty"),
]  # fmt: skip


def test_e7_example_7():
    plan = plan_partition(FIG9, F(1, 4), F(2, 3))
    assert plan.sa_prime == [f"x{i}" for i in range(2, 11)]
    assert plan.t2 == {"x1": 12} and plan.t_prime_size == 30
    assert (plan.f_max, plan.beta, plan.beta_prime) == (8, 5, 3)
    assert plan.lemma5 == (F(3, 10), F(3, 7))
    assert_trace(plan.phase1.trace, E7_TRACE)
    d = plan.distribution
    assert (d.quotas, d.residue, d.t2_order) == ([6, 3, 1, 1], 1, ["x1"])
    assert d.takes == [6, 3, 1, 2]
    assert plan.groups == [
        vector([6, 5, 5, 5, 0, 0, 0, 0, 0, 0]),
        vector([3, 3, 0, 0, 3, 3, 0, 0, 0, 0]),
        vector([1, 0, 1, 0, 1, 0, 1, 0, 0, 0]),
        vector([2, 0, 0, 0, 0, 0, 0, 1, 1, 1]),
    ]
    assert [(s.size, s.m, s.rho1, s.bound, s.gamma, s.p, s.q) for s in plan.subtables] == [
        (21, 4, F(5, 21), F(3, 10), F(32, 5), F(27, 47), F(5, 47)),
        (12, 4, F(1, 4), F(3, 7), 6, F(5, 9), F(1, 9)),
        (4, 4, F(1, 4), F(3, 7), 6, F(5, 9), F(1, 9)),
        (5, 4, F(1, 5), F(3, 7), 8, F(7, 11), F(1, 11)),
    ]
    assert all(s.worst_posterior == F(2, 3) for s in plan.subtables)
    # g1 is only nearly beta-balanced: 5/21 > 1/5
    assert plan.subtables[0].rho1 > F(1, plan.beta)
    w = plan.whole_table
    assert (w.rho1, w.gamma, w.m, w.p) == (F(4, 21), F(17, 2), 10, F(3, 7))
    share = sum(s.size * s.kept_share for s in plan.subtables) / plan.n
    assert share == F(22180, 32571)
    # The spec's table (section 6.5) prints 1/2 here, but with p = 3/7 and q = 1/(m - 1 + gamma)
    # = 1/(9 + 17/2) = 2/35 the kept share is p + q = 17/35 (about 0.486); see the report.
    assert w.q == F(2, 35)
    assert w.kept_share == F(17, 35)
    assert check_plan(plan) == []


# ---------------------------------------------------------------------------------------- T1-T4
def test_t1_h_zero_tiny_table():
    plan = plan_partition(counts("a:2 b:2 c:1"), F(1, 2), F(3, 4))
    assert (plan.f_max, plan.beta, plan.beta_prime) == (2, 2, 2)
    assert_trace(plan.phase1.trace, [
        (5, "a:2 b:2 c:1", "2 (a)", "2 (b)", "1 (c)", F(3, 2), "floor", 1, "a:1 b:1", "3/1"),
        (3, "a:1 b:1 c:1", "1 (a)", "1 (b)", "1 (c)", F(1, 2), "floor", 0, "a:1 b:1 c:1", "empty"),
    ])  # fmt: skip
    assert params(plan) == [(2, 2, F(1, 2), 3, F(1, 2)), (3, 3, F(1, 3), 6, F(5, 8))]
    assert check_plan(plan) == []


T2_STABLE = [
    (17, "a:6 b:5 c:2 d:2 e:2", "6 (a)", "5 (b)", "2 (c)", F(13, 2), "h=fb", 5, "a:5 b:5", "7/2"),
    (7, "c:2 d:2 e:2 a:1", "2 (c)", "2 (d)", "2 (e)", F(3, 2), "floor", 1, "c:1 d:1", "5/2"),
    (5, "e:2 c:1 d:1 a:1", "2 (e)", "1 (c)", "1 (d)", F(3, 2), "h=fb", 1, "e:1 c:1", "3/1"),
    (3, "e:1 d:1 a:1", "1 (e)", "1 (d)", "1 (a)", F(1, 2), "floor", 0, "e:1 d:1 a:1", "empty"),
]  # fmt: skip


def test_t2_tie_policy_decides_group_contents():
    c = counts("a:6 b:5 c:2 d:2 e:2")
    plan = plan_partition(c, F(1, 2), F(3, 4))
    assert (plan.f_max, plan.beta) == (6, 2)
    assert_trace(plan.phase1.trace, T2_STABLE)
    assert plan.groups == [counts("a:5 b:5"), counts("c:1 d:1"), counts("c:1 e:1"),
                           counts("a:1 d:1 e:1")]  # fmt: skip
    assert params(plan) == [
        (10, 2, F(1, 2), 3, F(1, 2)),
        (2, 2, F(1, 2), 3, F(1, 2)),
        (2, 2, F(1, 2), 3, F(1, 2)),
        (3, 3, F(1, 3), 6, F(5, 8)),
    ]
    other = plan_partition(c, F(1, 2), F(3, 4), tie_policy="value_order")
    assert [list(o) for o in (r.order for r in other.phase1.trace)][2] == [
        ("e", 2), ("a", 1), ("c", 1), ("d", 1),
    ]  # fmt: skip
    assert other.groups[2] == counts("a:1 e:1")
    assert other.groups[3] == counts("c:1 d:1 e:1")
    assert [s.size for s in other.subtables] == [10, 2, 2, 3]
    assert other.phase1.h_sequence == plan.phase1.h_sequence
    assert check_plan(plan) == [] and check_plan(other) == []


def test_t3_ties_across_the_beta_boundary():
    plan = plan_partition(counts("a:4 b:3 c:3 d:3 e:1"), F(1, 3), F(2, 3))
    assert (plan.f_max, plan.beta) == (4, 3)
    assert_trace(plan.phase1.trace, [
        (14, "a:4 b:3 c:3 d:3 e:1", "4 (a)", "3 (c)", "3 (d)", F(5, 3), "floor", 1, "a:1 b:1 c:1", "11/3"),
        (11, "a:3 d:3 b:2 c:2 e:1", "3 (a)", "2 (b)", "2 (c)", F(5, 3), "floor", 1, "a:1 d:1 b:1", "8/2"),
        (8, "a:2 d:2 c:2 b:1 e:1", "2 (a)", "2 (c)", "1 (b)", F(5, 3), "floor", 1, "a:1 d:1 c:1", "5/1"),
        (5, "a:1 d:1 c:1 b:1 e:1", "1 (a)", "1 (c)", "1 (b)", F(2, 3), "floor", 0,
         "a:1 d:1 c:1 b:1 e:1", "empty"),
    ])  # fmt: skip
    # Lemma 3 in iteration 1: h = 2 would leave a:2 b:1 c:1 d:3 e:1 and 3*3 > 8
    row = plan.phase1.trace[0]
    assert plan.beta * max(row.f1[1] - 2, row.fb1[1]) > row.n0 - plan.beta * 2
    assert params(plan) == [(3, 3, F(1, 3), 4, F(1, 2))] * 3 + [(5, 5, F(1, 5), 8, F(7, 12))]
    assert check_plan(plan) == []


def test_t4_exactly_beta_equal_values_inclusive_boundary():
    plan = plan_partition(counts("a:3 b:3 c:3"), F(1, 3), F(2, 3))
    assert plan.sa_prime == ["a", "b", "c"]  # 3/9 <= 1/3 is inclusive
    assert plan.beta == 3
    assert_trace(plan.phase1.trace, [
        (9, "a:3 b:3 c:3", "3 (a)", "3 (c)", "0", 3, "h=fb", 3, "a:3 b:3 c:3", "empty"),
    ])  # fmt: skip
    assert params(plan) == [(9, 3, F(1, 3), 4, F(1, 2))]


# ---------------------------------------------------------------------------------------- T5
def test_t5_two_t2_values_residue_and_split():
    plan = plan_partition(counts("a:10 b:7 c:4 d:3 e:3 f:2 g:1"), F(1, 5), F(1, 2))
    assert plan.sa_prime == ["c", "d", "e", "f", "g"]
    assert plan.t2 == {"a": 10, "b": 7} and plan.t_prime_size == 13
    assert (plan.f_max, plan.beta, plan.beta_prime) == (4, 7, 3)
    assert plan.lemma5 == (F(3, 14), F(3, 11))
    assert_trace(plan.phase1.trace, [
        (13, "c:4 d:3 e:3 f:2 g:1", "4 (c)", "3 (e)", "2 (f)", F(7, 3), "floor", 2, "c:2 d:2 e:2", "7/2"),
        (7, "c:2 f:2 d:1 e:1 g:1", "2 (c)", "1 (d)", "1 (e)", F(4, 3), "h=fb", 1, "c:1 f:1 d:1", "4/1"),
        (4, "c:1 f:1 e:1 g:1", "1 (c)", "1 (e)", "1 (g)", F(1, 3), "floor", 0, "c:1 f:1 e:1 g:1", "empty"),
    ])  # fmt: skip
    d = plan.distribution
    sizes = [6, 3, 4]
    assert [F(s * 17, 13) for s in sizes] == [F(102, 13), F(51, 13), F(68, 13)]
    assert (d.quotas, d.residue, d.t2_order) == ([7, 3, 5], 2, ["a", "b"])
    assert plan.groups == [
        counts("a:7 c:2 d:2 e:2"), counts("a:3 c:1 d:1 f:1"), counts("b:7 c:1 e:1 f:1 g:1"),
    ]  # fmt: skip
    assert [(s.size, s.m, s.rho1, s.gamma, s.p) for s in plan.subtables] == [
        (13, 4, F(2, 13), F(11, 2), F(9, 17)),
        (6, 4, F(1, 6), 5, F(1, 2)),
        (11, 5, F(1, 11), 10, F(9, 14)),
    ]
    assert all(s.bound == F(3, 11) for s in plan.subtables)  # no whole-number case
    assert check_plan(plan) == []


# ---------------------------------------------------------------------------------------- T6-T9
def test_t6_beta_one_fallback():
    plan = plan_partition(counts("a:5 b:1"), F(9, 10), F(19, 20))
    assert plan.sa_prime == ["a", "b"] and (plan.f_max, plan.beta) == (5, 1)
    assert_trace(plan.phase1.trace, [
        (6, "a:5 b:1", "5 (a)", "5 (a)", "1 (b)", 5, "h=fb", 5, "a:5", "1/1"),
        (1, "b:1", "1 (b)", "1 (b)", "0", 1, "h=fb", 1, "b:1", "empty"),
    ])  # fmt: skip
    assert [(s.rho1, s.gamma, s.admissible) for s in plan.subtables] == [(1, 0, False)] * 2
    assert plan.status == STATUS_BETA_ONE and plan.refused
    assert "beta = 1" in plan.reason and "partitioning cannot protect" in plan.reason
    w = plan.whole_table
    assert (w.rho1, w.gamma, w.m, w.p, w.q) == (F(5, 6), F(19, 5), 2, F(7, 12), F(5, 24))
    with pytest.raises(InputError):
        plan.publishable()
    assert plan.publishable(accept_fallback=True) == [w]


def test_t7_beta_prime_one_no_lemma5_bound():
    plan = plan_partition(counts("a:10 b:5 c:1"), F(1, 3), F(2, 3))
    assert plan.sa_prime == ["b", "c"] and plan.t2 == {"a": 10}
    assert (plan.f_max, plan.beta, plan.beta_prime) == (5, 3, 1)
    assert plan.lemma5 == (None, None)
    assert_trace(plan.phase1.trace, [
        (6, "b:5 c:1", "5 (b)", "5 (b)", "1 (c)", 5, "h=fb", 5, "b:5", "1/1"),
        (1, "c:1", "1 (c)", "1 (c)", "0", 1, "h=fb", 1, "c:1", "empty"),
    ])  # fmt: skip
    d = plan.distribution
    assert (d.quotas, d.residue) == ([8, 1], 1)
    assert plan.groups == [counts("a:8 b:5"), counts("a:2 c:1")]
    assert [(s.m, s.rho1, s.gamma, s.p, s.bound) for s in plan.subtables] == [
        (2, F(5, 13), F(16, 5), F(11, 21), None),
        (2, F(1, 3), 4, F(3, 5), None),
    ]
    assert plan.status == STATUS_OK
    # a global gamma = 4 would breach: posterior 5/7 > 2/3 in g1
    assert worst_posterior(F(4), F(5, 13)) == F(5, 7)
    assert check_plan(plan) == []


def test_t8_gamma_per_subtable_not_global():
    rho1, rho2 = F(3, 10), F(2, 3)
    plan = plan_partition(FIG9, rho1, rho2)
    e6 = plan_partition(FIG9, F(1, 3), rho2)
    assert plan.sa_prime == list(FIG9) and plan.beta == 3
    assert plan.groups == e6.groups
    assert [r.h for r in plan.phase1.trace] == [6, 4, 2, 1, 1]
    for s in plan.subtables:
        assert (s.rho1, s.gamma, s.p, s.worst_posterior) == (F(1, 3), 4, F(1, 2), F(2, 3))
        assert s.rho1 > rho1  # the adversary's prior inside the group exceeds rho1
    # what a global-gamma implementation would publish, and why the checks must reject it
    global_gamma = gamma_for(rho1, rho2)
    assert global_gamma == F(14, 3)
    wrong_p, _ = retention(global_gamma, 3)
    assert wrong_p == F(11, 20)
    assert worst_posterior(global_gamma, F(1, 3)) == F(7, 10) > rho2
    assert all(s.p != wrong_p and s.gamma != global_gamma for s in plan.subtables)


def test_t8_invariant_check_rejects_a_global_gamma_plan():
    from dataclasses import replace

    plan = plan_partition(FIG9, F(3, 10), F(2, 3))
    bad_gamma = gamma_for(F(3, 10), F(2, 3))
    p, q = retention(bad_gamma, 3)
    plan.subtables = [
        replace(s, gamma=bad_gamma, p=p, q=q, worst_posterior=worst_posterior(bad_gamma, s.rho1))
        for s in plan.subtables
    ]
    assert any("exceeds rho2" in v for v in check_plan(plan))


def test_t9_inadmissible_subtable_is_refused():
    plan = plan_partition(counts("a:6 b:5 c:1 d:1"), F(2, 5), F(2, 3))
    assert plan.sa_prime == ["b", "c", "d"] and plan.t2 == {"a": 6}
    assert (plan.f_max, plan.beta, plan.beta_prime) == (5, 2, 1)
    trace = plan.phase1.trace
    assert [(r.h, r.branch, r.phi, r.group) for r in trace] == [
        (5, "h=fb", 6, {"b": 5}), (1, "h=fb", 1, {"c": 1}), (1, "h=fb", 1, {"d": 1}),
    ]  # fmt: skip
    d = plan.distribution
    assert (d.quotas, d.residue) == ([4, 0, 0], 2)
    assert plan.groups == [counts("a:4 b:5"), counts("c:1"), counts("a:2 d:1")]
    g1, g2, g3 = plan.subtables
    assert (g1.rho1, g1.gamma, g1.p) == (F(5, 9), F(8, 5), F(3, 13))
    assert (g2.rho1, g2.admissible, g2.p) == (1, False, None)
    assert (g3.m, g3.rho1, g3.gamma, g3.p) == (2, F(1, 3), 4, F(3, 5))
    assert plan.status == STATUS_REFUSED and "g2" in plan.reason
    w = plan.whole_table
    assert (w.rho1, w.gamma, w.m, w.p) == (F(5, 13), F(16, 5), 4, F(11, 31))
    with pytest.raises(InputError, match="fallback"):
        plan.publishable()
    assert plan.publishable(accept_fallback=True) == [w]
    assert check_plan(plan) == []


def test_figure9_refused_when_one_over_beta_reaches_rho2():
    plan = plan_partition(FIG9, F(3, 10), F(8, 25))
    assert plan.status == STATUS_REFUSED
    assert plan.whole_table.admissible


def test_sa_prime_empty_means_nothing_to_protect():
    plan = plan_partition(counts("a:5 b:5"), F(3, 10), F(1, 2))
    assert plan.status == "nothing_to_protect" and plan.sa_prime == []
    with pytest.raises(InputError, match="SA' is empty"):
        plan.publishable(accept_fallback=True)
