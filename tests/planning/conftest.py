"""Shared by the budget-plan tests: a registry with one dataset, and a recorded release."""

import pytest

from core.privacy import Cost
from core.registry import Claim, Policy, Registry


@pytest.fixture
def registry(tmp_path):
    """Dataset 'city' (one point), budget ε 3, δ 1e-5."""
    data = tmp_path / "points.csv"
    data.write_text("lat,lon\n1,2\n")
    reg = Registry(tmp_path / "reg")
    reg.add_dataset("city", [("points", data)], Policy(3.0, 1e-5))
    return reg


def charge(reg, tool, eps, delta=0.0, **params):
    """A delivered release of `tool` on 'city' costing (eps, delta), with `params`."""
    release = reg.charge(tool, "city", params, Cost(eps, delta), "secure", Claim("one point"))
    return reg.attach(release.id, {"tool": tool})
