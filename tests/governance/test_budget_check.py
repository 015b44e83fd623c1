"""Issue 28 item 3: (ε, δ) is one budget everywhere. Every refusal names the dimension(s) that
ran out, and its fix works: following it makes the request pass (lower what ran short, to the
value stated) or is the owner's action (raise that total, to the value stated).

Measured before: after one default DP SQL query (δ 1e-5) an analyst's δ was spent, and every
later refusal said "Fix: lower epsilon to <= 4.715" though ε 0.285 fitted."""

from __future__ import annotations

import re

import pytest

from core.errors import BudgetExceededError, InputError
from core.governance import Request, Role, check_fits, govern
from core.governance.caps import QueryCaps
from core.privacy import Cost, Noise
from core.registry import Claim, Policy, Registry

SQL_DEFAULT = Cost(0.285, 1e-5)  # one default DP SQL query: ε 0.285, δ 1e-5


@pytest.fixture
def reg(tmp_path) -> Registry:
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    r = Registry(tmp_path / "reg")
    r.add_dataset("city", [("t", table)], Policy(5.0, 1e-5), uid="uid")
    return r


def charge(reg: Registry, cost: Cost, dataset: str = "city"):
    return reg.charge("sql", dataset, {}, cost, "secure", Claim("one person"))


def refusal(reg: Registry, cost: Cost, dataset: str = "city") -> str:
    with pytest.raises(BudgetExceededError) as err:
        charge(reg, cost, dataset)
    return str(err.value)


def owner_fix(message: str, flag: str) -> float:
    """The value the message tells the owner to set (`dpx dataset budget NAME --delta D`)."""
    m = re.search(rf"`dpx dataset budget \S+ [^`]*--{flag} ([0-9](?:[0-9.e+-]*[0-9])?)", message)
    assert m, message
    return float(m[1])


def lowered(message: str, dimension: str) -> float:
    m = re.search(rf"(?:lower|and) {dimension} to <= ([0-9](?:[0-9.e+-]*[0-9])?)", message)
    assert m, message
    return float(m[1])


def test_delta_spent_names_delta_and_never_asks_to_lower_epsilon(reg):
    charge(reg, SQL_DEFAULT)
    message = refusal(reg, SQL_DEFAULT)
    assert "delta is spent: 1e-05 of 1e-05 used; this request needs delta 1e-05" in message
    assert "epsilon 0.285 fits" in message
    assert "lower epsilon" not in message
    assert "use a release that needs no delta" in message
    # the owner's action as stated makes the same request pass
    reg.set_budget("city", delta=owner_fix(message, "delta"))
    assert charge(reg, SQL_DEFAULT).delta == pytest.approx(1e-5)


def test_delta_spent_a_release_that_needs_no_delta_passes(reg):
    charge(reg, SQL_DEFAULT)
    message = refusal(reg, SQL_DEFAULT)
    assert "needs no delta" in message
    assert charge(reg, Cost(SQL_DEFAULT.epsilon, 0.0)).epsilon == pytest.approx(0.285)


def test_epsilon_short_says_lower_epsilon_to_a_value_that_passes(reg):
    """What remains is 5 - 3 x 13/9 = 2/3: the stated value is rounded down, so charging exactly
    it passes (the old `:g` rounding stated 0.666667, just above what remains: refused)."""
    step = 13 / 9
    for _ in range(3):
        charge(reg, Cost(step))
    left = reg.remaining("city")[0]
    message = refusal(reg, Cost(1.0))
    assert "epsilon is short" in message and "delta" not in message.split("Fix:")[1]
    value = lowered(message, "epsilon")
    assert value <= left and value == pytest.approx(left, rel=1e-5)
    charge(reg, Cost(value))


def test_both_short_names_both_with_fixes_that_pass(reg):
    charge(reg, Cost(4.5, 6e-6))
    message = refusal(reg, Cost(1.0, 1e-5))
    assert "epsilon is short" in message and "delta is short" in message
    eps, delta = lowered(message, "epsilon"), lowered(message, "delta")
    charge(reg, Cost(eps, delta))  # lowering both as stated passes


def test_both_short_owner_raising_both_as_stated_passes(reg):
    charge(reg, Cost(4.5, 6e-6))
    message = refusal(reg, Cost(1.0, 1e-5))
    reg.set_budget("city", owner_fix(message, "epsilon"), owner_fix(message, "delta"))
    charge(reg, Cost(1.0, 1e-5))


def test_policy_caps_name_every_dimension_above_its_cap(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    reg = Registry(tmp_path / "reg")
    reg.add_dataset("capped", [("t", table)], Policy(5.0, 1e-4, 0.5, 1e-6), uid="uid")
    message = refusal(reg, Cost(1.0, 1e-5), "capped")
    assert "max_epsilon_per_query = 0.5" in message and "max_delta_per_query = 1e-06" in message
    charge(reg, Cost(lowered(message, "epsilon"), lowered(message, "delta")), "capped")


def test_invocation_caps_name_delta_when_delta_is_above_its_cap():
    with pytest.raises(InputError) as err:
        QueryCaps(1.0, 0.0).check(2.0, 1e-5)
    message = str(err.value)
    assert message.startswith("DPX-B002 ")
    assert "max_epsilon_per_query = 1" in message and "max_delta_per_query = 0" in message
    assert "use a release that needs no delta" in message


def test_check_fits_names_delta_for_a_set_of_releases(reg):
    charge(reg, Cost(0.1, 8e-6))
    with pytest.raises(BudgetExceededError) as err:
        check_fits(reg, reg.dataset("city"), [Cost(0.2, 1e-6)] * 3, "pp", {})
    message = str(err.value)
    assert "3 release(s) together" in message and "delta is short" in message
    assert "epsilon 0.6 fits" in message and "lower epsilon" not in message
    assert reg.spent("city") == pytest.approx((0.1, 8e-6))  # nothing charged


def test_the_governed_flow_refuses_with_the_same_words(reg):
    charge(reg, SQL_DEFAULT)
    request = Request(
        "sql", Role.ANALYST, reg.dataset("city"), {}, SQL_DEFAULT, Claim("one person"),
        Noise.secure(),
    )  # fmt: skip
    with pytest.raises(BudgetExceededError, match="delta is spent"):
        govern(reg, request, lambda acc: None, lambda r: {})
    assert "delta is spent" in reg.refusals("city")[-1].reason


def test_check_budget_is_typed():
    from core.privacy.cost import Dimension, check_budget

    short = check_budget(SQL_DEFAULT, spent=Cost(0.285, 1e-5), total=Cost(5.0, 1e-5))
    assert short is not None and short.dimensions == (Dimension.DELTA,)
    assert short.shortage(Dimension.DELTA).exhausted
    assert short.raised_totals == Cost(0.0, 2e-5)
    assert check_budget(SQL_DEFAULT, spent=Cost(0.285, 0.0), total=Cost(5.0, 1e-5)) is None
    capped = check_budget(Cost(2.0), total=Cost(5.0), max_epsilon=1.0)
    assert capped.dimensions == (Dimension.EPSILON,) and capped.shortages[0].by_cap
    assert capped.largest_fitting == Cost(1.0)
