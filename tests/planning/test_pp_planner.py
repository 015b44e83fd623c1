"""The PP planner: feasibility is PP's own plan's verdict, the predicted error is what the
sub-tables' randomization mechanisms actually produce, and the strictest rho2 is the smallest
grid value that meets the target."""

from fractions import Fraction

import numpy as np
import pytest

from core.balancing.estimate import subtable_estimate
from core.balancing.plan import plan_partition
from core.balancing.release import publishable_subtables, subtable_mechanisms
from core.errors import InputError
from core.planning.pp import RHO_STEPS, PPShape, plan_pp, rho_frontier, strictest_rho2
from core.privacy import Accountant, Noise, PPRandomization, RhoClaim

SHAPE = PPShape(("a", "b", "c", "d", "e"), (0.3, 0.25, 0.2, 0.15, 0.1), 3000, True)


def test_predicted_randomization_error_covers_at_its_stated_rate():
    """Perturb the planned sub-tables many times through their `PPRandomization` objects,
    reconstruct each value's share with the published estimator and count how often the error
    is within the planner's half-width: 95 % stated, so 0.93-0.97 over 600 runs x 5 values
    (binomial sd 0.4 %: a correct planner is inside every time, a factor-1.2 error is not)."""
    rho1, rho2 = Fraction(1, 4), Fraction(1, 2)
    plan = plan_pp(SHAPE, rho1, rho2, plan_epsilon=1.0)
    assert plan.feasible
    half = dict(plan.per_value_randomization)
    counts = SHAPE.counts()
    partition = plan_partition(counts, rho1, rho2)
    subs, _ = publishable_subtables(partition, False)
    mechs = subtable_mechanisms(subs, rho2)
    sub_ids = np.concatenate([np.full(s.size, i) for i, s in enumerate(subs)])
    local = np.concatenate(
        [np.repeat(np.arange(s.m), [s.counts[v] for v in s.domain]) for s in subs]
    )
    accountant = Accountant(Noise.seeded(11), rho=RhoClaim(rho1, rho2))
    covered = []
    for _ in range(600):
        out = PPRandomization.draw_partitioned(accountant, mechs, sub_ids, local)
        estimate = dict.fromkeys(counts, Fraction(0))
        for i, (s, m) in enumerate(zip(subs, mechs, strict=True)):
            observed = np.bincount(out[sub_ids == i], minlength=s.m)
            p = m.retention
            q = (1 - p) / m.domain_size
            per = subtable_estimate(dict(zip(s.domain, observed.tolist(), strict=True)),
                                    s.size, p, q, s.domain)  # fmt: skip
            for v, (e, _) in per.items():
                estimate[v] += e
        for v, true in counts.items():
            covered.append(abs(float(estimate[v]) - true) / SHAPE.rows <= half[v])
    rate = float(np.mean(covered))
    assert 0.93 <= rate <= 0.97, rate


def test_the_plan_noise_part_is_the_plan_mechanism_half_width():
    plan = plan_pp(SHAPE, Fraction(1, 4), Fraction(1, 2), plan_epsilon=0.5)
    from core.balancing.release import ReleaseSettings

    mech = ReleaseSettings(Fraction(1, 4), Fraction(1, 2), plan_epsilon=0.5).plan_mechanism
    assert plan.plan_error == pytest.approx(mech.half_width(0.95) / SHAPE.rows)
    assert plan.cost.epsilon == pytest.approx(0.5)


def test_infeasible_when_nothing_needs_protection():
    plan = plan_pp(PPShape.uniform("abcd", 1000), Fraction(1, 10), Fraction(1, 2))
    assert not plan.feasible
    assert "rare enough" in plan.reason
    assert "not feasible" in plan.describe()


def test_strictest_rho2_is_the_smallest_grid_value_meeting_the_target():
    target = 0.04
    answer = strictest_rho2(SHAPE, Fraction(1, 4), target)
    assert answer.rho2 is not None
    assert answer.plan.feasible and answer.plan.error <= target
    below = plan_pp(SHAPE, Fraction(1, 4), answer.rho2 - Fraction(1, RHO_STEPS))
    assert not (below.feasible and below.error <= target)


def test_a_looser_target_allows_a_stricter_rho2():
    strict = strictest_rho2(SHAPE, Fraction(1, 4), 0.06).rho2
    loose = strictest_rho2(SHAPE, Fraction(1, 4), 0.03).rho2
    assert strict <= loose


def test_the_error_falls_as_rho2_grows():
    errors = [plan_pp(SHAPE, Fraction(1, 4), Fraction(k, 10)).error for k in (4, 5, 6, 7, 8)]
    assert errors == sorted(errors, reverse=True)


def test_an_unreachable_target_gives_no_rho2():
    answer = strictest_rho2(SHAPE, Fraction(1, 4), 1e-4)
    assert answer.rho2 is None and answer.plan is None


def test_frontier_lists_each_rho1():
    rows = rho_frontier(SHAPE, 0.05)
    assert [r.rho1 for r in rows] == sorted(r.rho1 for r in rows)


@pytest.mark.parametrize(
    "make",
    [
        lambda: PPShape(("a",), (1.0,), 10),
        lambda: PPShape(("a", "b"), (0.5, 0.6), 10),
        lambda: PPShape(("a", "b"), (0.5, 0.5), 1),
        lambda: strictest_rho2(SHAPE, Fraction(1, 4), 2.0),
    ],
)
def test_bad_input_is_one_line(make):
    with pytest.raises(InputError) as err:
        make()
    assert "\n" not in str(err.value)
