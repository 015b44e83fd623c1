"""The budget ledger: totals, refusals, composition, export."""

import pytest

from core.errors import BudgetExceededError
from core.privacy import BudgetLedger, make_spend


def test_sequential_spends_add_up():
    ledger = BudgetLedger(total_epsilon=1.0)
    ledger.spend("laplace", "count", 0.25)
    ledger.spend("laplace", "sum", 0.5, delta=1e-6)
    assert ledger.epsilon_spent == pytest.approx(0.75)
    assert ledger.delta_spent == pytest.approx(1e-6)
    assert ledger.epsilon_remaining == pytest.approx(0.25)


def test_parallel_spends_in_one_group_cost_their_maximum():
    ledger = BudgetLedger()
    for eps in (0.1, 0.3, 0.2):
        ledger.spend("laplace", "leaf counts", eps, composition="parallel", group="level-1")
    ledger.spend("laplace", "other level", 0.1, composition="parallel", group="level-2")
    assert ledger.epsilon_spent == pytest.approx(0.4)


def test_overspend_is_refused_before_recording():
    ledger = BudgetLedger(total_epsilon=1.0, total_delta=1e-5)
    ledger.spend("laplace", "count", 0.9)
    with pytest.raises(BudgetExceededError, match="only 0.1 of 1 remains"):
        ledger.spend("laplace", "sum", 0.2)
    assert len(ledger.spends) == 1
    with pytest.raises(BudgetExceededError, match="delta"):
        ledger.spend("threshold", "partition selection", 0.0, delta=2e-5)


def test_floating_point_sum_equal_to_total_is_allowed():
    ledger = BudgetLedger(total_epsilon=0.3)
    ledger.spend("a", "x", 0.1)
    ledger.spend("b", "y", 0.2)  # 0.1 + 0.2 = 0.30000000000000004
    assert ledger.epsilon_remaining == pytest.approx(0.0)


def test_spend_all_is_atomic():
    ledger = BudgetLedger(total_epsilon=1.0)
    plan = [make_spend("a", "x", 0.6), make_spend("b", "y", 0.6)]
    with pytest.raises(BudgetExceededError):
        ledger.spend_all(plan)
    assert ledger.spends == []
    ledger.spend_all(plan[:1])
    assert ledger.epsilon_spent == pytest.approx(0.6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"epsilon": -1}, "epsilon"),
        ({"epsilon": float("inf")}, "epsilon"),
        ({"epsilon": 1, "delta": 1.5}, "delta"),
        ({"epsilon": 1, "composition": "parallel"}, "group"),
        ({"epsilon": 1, "composition": "weird"}, "composition"),
    ],
)
def test_invalid_spends_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BudgetLedger().spend("m", "p", **kwargs)


def test_json_and_csv_round_trip():
    ledger = BudgetLedger(total_epsilon=2.0, total_delta=1e-5)
    ledger.spend("laplace", "count", 0.5)
    ledger.spend("laplace", "leaves", 0.25, composition="parallel", group="level-0")
    ledger.spend("threshold", "partitions", 0.0, delta=1e-6)
    back = BudgetLedger.from_json(ledger.to_json())
    assert back.spends == ledger.spends
    assert back.total_epsilon == 2.0 and back.total_delta == 1e-5
    from_csv = BudgetLedger.from_csv(ledger.to_csv(), total_epsilon=2.0)
    assert from_csv.spends == ledger.spends
    assert from_csv.epsilon_spent == pytest.approx(0.75)


def test_scopes_keep_two_releases_parallel_groups_apart():
    ledger = BudgetLedger()
    for _ in range(2):
        scope = ledger.scope("grid")
        for cell in range(3):
            ledger.spend(
                "laplace", f"cell {cell}", 0.5, composition="parallel", group=f"{scope}-cells"
            )
    assert ledger.epsilon_spent == pytest.approx(1.0)  # one group would have charged 0.5
    assert ledger.scope("grid") == "grid#3"
    assert ledger.scope("other") == "other"
