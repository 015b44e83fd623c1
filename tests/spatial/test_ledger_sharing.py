"""Budget accounting when several releases share one ledger (audit regression tests).

Parallel spends that share a group cost only their maximum, so each release must use group names
of its own: two releases on one ledger cost the sum of their epsilons (spec §7: "K releases whose
budgets add up"), and a ledger's total is enforced across releases.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import BudgetExceededError, InputError
from core.privacy import BudgetLedger, Noise
from core.spatial.baselines import BASELINES
from core.spatial.htf import build_htf

BUILDERS = {"htf": build_htf, **BASELINES}


@pytest.fixture(scope="module")
def F() -> np.ndarray:
    return np.random.default_rng(0).poisson(3, size=(32, 32)).astype(np.int64)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_two_releases_on_one_ledger_cost_the_sum(name, F):
    ledger = BudgetLedger()
    BUILDERS[name](F, 0.5, Noise.seeded(1), ledger)
    assert ledger.epsilon_spent == pytest.approx(0.5, abs=1e-12)
    BUILDERS[name](F, 0.5, Noise.seeded(2), ledger)
    assert ledger.epsilon_spent == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_ledger_total_is_enforced_across_releases(name, F):
    ledger = BudgetLedger(1.0)
    BUILDERS[name](F, 0.4, Noise.seeded(1), ledger)
    BUILDERS[name](F, 0.4, Noise.seeded(2), ledger)
    with pytest.raises(BudgetExceededError):
        BUILDERS[name](F, 0.4, Noise.seeded(3), ledger)
    assert ledger.epsilon_spent == pytest.approx(0.8, abs=1e-12)


def test_htf_refusal_after_the_noisy_n_still_ledgers_eps_height():
    # N = 1.2 M points: h >= 11 for any plausible N_hat, and 11 x 5e-3 leaves no data budget;
    # the refusal (and the height its message names) depends on N_hat, so eps_height is spent
    F = np.full((64, 64), 300, dtype=np.int64)
    ledger = BudgetLedger(1.0)
    with pytest.raises(InputError, match="nothing for the counts"):
        build_htf(F, 0.02, Noise.seeded(0), ledger, eps_prt_level=5e-3)
    assert ledger.epsilon_spent == pytest.approx(1e-4, abs=1e-15)


def test_htf_refusal_with_a_fixed_height_spends_nothing():
    F = np.full((64, 64), 300, dtype=np.int64)
    ledger = BudgetLedger(1.0)
    with pytest.raises(InputError, match="nothing for the counts"):
        build_htf(F, 0.02, Noise.seeded(0), ledger, eps_prt_level=5e-3, height=11)
    assert ledger.epsilon_spent == 0.0
