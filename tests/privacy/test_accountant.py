"""The accountant: composition of the mechanisms that drew, the charge as a filter, parallel
draws of one object, and replacements of planned mechanisms (HTF's path budget)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from core.privacy import (
    Accountant,
    Cost,
    DiscreteLaplace,
    Laplace,
    Noise,
    Overdraw,
    PPRandomization,
    RhoClaim,
)


def acct(budget=None, rho=None) -> Accountant:
    return Accountant(Noise.seeded(1), budget, rho)


def test_costs_add_up_and_the_same_object_counts_once():
    a = acct(Cost(1.0))
    level = DiscreteLaplace("level 2 counts", sensitivity=1, epsilon=0.25)
    n = Laplace("noisy N", sensitivity=1, epsilon=0.25)
    n.draw(a, 10.0)
    level.draw(a, np.arange(4))
    level.draw(a, np.arange(7))  # a second batch of the same level: disjoint nodes
    assert a.mechanisms == (n, level)
    assert a.spent == Cost(0.5)
    assert a.remaining == Cost(0.5)


def test_a_draw_beyond_the_charge_is_refused_before_it_draws(monkeypatch):
    a = acct(Cost(0.3))
    DiscreteLaplace("first", sensitivity=1, epsilon=0.2).draw(a, np.zeros(2, np.int64))
    drew = []
    monkeypatch.setattr(Noise, "discrete_laplace", lambda *a, **k: drew.append(1))
    with pytest.raises(Overdraw):
        DiscreteLaplace("second", sensitivity=1, epsilon=0.2).draw(a, np.zeros(2, np.int64))
    assert drew == [] and a.spent == Cost(0.2)


def test_float_sums_within_slack_fit():
    a = acct(Cost(0.3))
    DiscreteLaplace("a", sensitivity=1, epsilon=0.1).draw(a, [0])
    DiscreteLaplace("b", sensitivity=1, epsilon=0.2).draw(a, [0])
    assert a.spent.fits(Cost(0.3))


def test_two_objects_cannot_share_a_label():
    a = acct()
    DiscreteLaplace("counts", sensitivity=1, epsilon=0.1).draw(a, [0])
    with pytest.raises(Overdraw):
        DiscreteLaplace("counts", sensitivity=1, epsilon=0.1).draw(a, [0])


def test_replacements_consume_what_they_replace():
    """HTF-like path budget: levels 2, 1, 0 at 0.4, 0.2, 0.1; a node pruned at level 2 spends
    the remaining 0.3 in place of levels 1 and 0; a structural node at level 1 spends
    0.3 in place of levels 1 and 0. The total stays 0.7 whatever draws."""
    levels = [
        DiscreteLaplace(f"counts h{i}", sensitivity=1, epsilon=e)
        for i, e in ((2, 0.4), (1, 0.2), (0, 0.1))
    ]
    for scenario in ("all pruned at 2", "mixed", "all deep"):
        a = acct(Cost(0.7))
        a.plan(levels)
        levels[0].draw(a, [5])
        if scenario in ("all pruned at 2", "mixed"):
            rem = DiscreteLaplace(
                "pruned h2", sensitivity=1, epsilon=0.3, in_place_of=("counts h1", "counts h0")
            )
            rem.draw(a, [5])
        if scenario in ("mixed", "all deep"):
            levels[1].draw(a, [3])
            structural = DiscreteLaplace(
                "structural h1", sensitivity=1, epsilon=0.3, in_place_of=("counts h1", "counts h0")
            )
            structural.draw(a, [1])
            if scenario == "all deep":
                levels[2].draw(a, [1])
        assert a.spent == Cost(0.4 + 0.2 + 0.1), scenario


def test_a_replacement_may_not_cost_more_or_replace_the_unplanned():
    a = acct(Cost(1))
    a.plan([DiscreteLaplace("deep", sensitivity=1, epsilon=0.1)])
    with pytest.raises(Overdraw):
        DiscreteLaplace("x", sensitivity=1, epsilon=0.2, in_place_of=("deep",)).draw(a, [0])
    with pytest.raises(Overdraw):
        DiscreteLaplace("y", sensitivity=1, epsilon=0.1, in_place_of=("nope",)).draw(a, [0])


def test_pp_randomization_must_stay_within_the_claim():
    m = PPRandomization("g1", rho1="1/5", rho2="1/2", retention="1/3", domain_size=3)
    with pytest.raises(Overdraw):  # no claim: refused
        m.draw(acct(), [0, 1])
    with pytest.raises(Overdraw):  # a claim tighter than what the sub-table gives
        m.draw(acct(rho=RhoClaim(Fraction(1, 5), Fraction(1, 3))), [0, 1])
    ok = acct(rho=RhoClaim(Fraction(1, 5), Fraction(1, 2)))
    m.draw(ok, [0, 1, 2])
    assert ok.mechanisms == (m,) and ok.spent == Cost()
