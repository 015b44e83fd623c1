"""Phase 2 `utility` merge (project design, spec section 6.1)."""

from __future__ import annotations

from fractions import Fraction as F

from core.balancing.invariants import check_plan
from core.balancing.plan import plan_partition
from core.balancing.subtables import subtable_params, utility
from tests.balancing.pp_helpers import FIG9, counts, vector


def test_merge_off_by_default():
    plan = plan_partition(FIG9, F(1, 3), F(2, 3))
    assert plan.merge_policy == "none" and plan.merge_steps == []
    assert len(plan.subtables) == 5


def test_e6_only_g4_g5_gain():
    base = plan_partition(FIG9, F(1, 3), F(2, 3))
    assert utility(base.subtables) == 21
    plan = plan_partition(FIG9, F(1, 3), F(2, 3), merge_policy="utility")
    assert [(s.i, s.j, s.gain) for s in plan.merge_steps] == [(3, 4, F(3, 5))]
    union = plan.subtables[3]
    assert union.counts == vector([0, 0, 0, 1, 0, 1, 1, 1, 1, 1])
    assert (union.rho1, union.gamma, union.m, union.p) == (F(1, 6), 10, 6, F(3, 5))
    assert utility(plan.subtables) == F(108, 5)
    assert check_plan(plan) == []


def test_e6_g1_g2_union_would_lower_p():
    plan = plan_partition(FIG9, F(1, 3), F(2, 3))
    g1, g2 = plan.groups[:2]
    union = {v: g1.get(v, 0) + g2.get(v, 0) for v in FIG9 if v in g1 or v in g2}
    s = subtable_params(union, set(FIG9), F(2, 3))
    assert (s.rho1, s.m, s.p) == (F(1, 3), 5, F(3, 8))


def test_e7_only_g3_g4_gain():
    base = plan_partition(FIG9, F(1, 4), F(2, 3))
    assert utility(base.subtables) == F(112298, 4653)
    plan = plan_partition(FIG9, F(1, 4), F(2, 3), merge_policy="utility")
    assert [(s.i, s.j, s.gain) for s in plan.merge_steps] == [(2, 3, F(145, 198))]
    union = plan.subtables[2]
    assert union.counts == counts("x1:3 x3:1 x5:1 x7:1 x8:1 x9:1 x10:1")
    assert (union.rho1, union.gamma, union.m, union.p) == (F(1, 9), 16, 7, F(15, 22))
    assert utility(plan.subtables) == F(77137, 3102)
    assert check_plan(plan) == []


def test_merge_never_raises_rho1_above_worse_part():
    plan = plan_partition(
        counts("a:9 b:7 c:5 d:5 e:3 f:2 g:2 h:1"), F(1, 4), F(3, 4), merge_policy="utility"
    )
    for step in plan.merge_steps:
        assert step.union.admissible
    before = plan_partition(counts("a:9 b:7 c:5 d:5 e:3 f:2 g:2 h:1"), F(1, 4), F(3, 4))
    worst = max(s.rho1 for s in before.subtables)
    assert all(s.rho1 <= worst for s in plan.subtables)
    assert utility(plan.subtables) >= utility(before.subtables)
    assert check_plan(plan) == []
