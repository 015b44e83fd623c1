"""Budget accounting when builds share one accountant (audit regression tests).

A release draws on its own `Accountant`; every mechanism label is prefixed by its method, so
different methods on one accountant compose (their costs add up) and the accountant's charge
is enforced across them, while a second build of the same method on the same accountant is
refused before it draws (a second measurement needs its own release).
"""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise, Overdraw
from core.spatial.baselines import BASELINES
from core.spatial.htf import build_htf

BUILDERS = {"htf": build_htf, **BASELINES}


@pytest.fixture(scope="module")
def F() -> np.ndarray:
    return np.random.default_rng(0).poisson(3, size=(32, 32)).astype(np.int64)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_the_same_method_twice_on_one_accountant_is_refused_before_drawing(name, F):
    a = Accountant(Noise.seeded(1))
    BUILDERS[name](F, 0.5, a)
    first = a.mechanisms
    with pytest.raises(Overdraw, match="labelled"):
        BUILDERS[name](F, 0.5, a)
    assert a.mechanisms == first


def test_different_methods_on_one_accountant_cost_the_sum_and_the_charge_holds(F):
    a = Accountant(Noise.seeded(1), Cost(1.0))
    BASELINES["ug"](F, 0.4, a)
    BASELINES["quadtree"](F, 0.4, a)
    assert a.spent.epsilon == pytest.approx(0.8, abs=1e-12)
    with pytest.raises(Overdraw):
        BASELINES["ag"](F, 0.4, a)
    assert a.spent.epsilon == pytest.approx(0.8, abs=1e-12)


def test_htf_refusal_after_the_noisy_n_still_records_eps_height():
    # N = 1.2 M points: h >= 11 for any plausible N_hat, and 11 x 5e-3 leaves no data budget;
    # the refusal (and the height its message names) depends on N_hat, so eps_height is spent
    F = np.full((64, 64), 300, dtype=np.int64)
    a = Accountant(Noise.seeded(0), Cost(1.0))
    with pytest.raises(InputError, match="nothing for the counts"):
        build_htf(F, 0.02, a, eps_prt_level=5e-3)
    (n,) = a.mechanisms
    assert n.label == "htf: noisy N (height)" and a.spent.epsilon == pytest.approx(1e-4, abs=1e-15)


def test_htf_refusal_with_a_fixed_height_spends_nothing():
    F = np.full((64, 64), 300, dtype=np.int64)
    a = Accountant(Noise.seeded(0), Cost(1.0))
    with pytest.raises(InputError, match="nothing for the counts"):
        build_htf(F, 0.02, a, eps_prt_level=5e-3, height=11)
    assert a.mechanisms == () and a.spent.epsilon == 0.0
