"""`charged_release`: the charge is committed before the computation, refusals compute nothing,
failures keep the charge."""

import pytest

from core.errors import BudgetExceededError, InputError
from core.registry import Mechanism, Policy, Registry, Status
from core.registry.release_flow import charged_release


@pytest.fixture
def reg(registry_dir, tmp_path) -> Registry:
    table = tmp_path / "t.csv"
    table.write_text("uid\n1\n")
    r = Registry(registry_dir)
    r.add_dataset("d", [("t", table)], Policy(2.0))
    return r


def test_charge_precedes_compute_and_artefact_is_attached(reg, registry_dir):
    seen = []

    def compute():
        seen.append(Registry(registry_dir).spent("d")[0])  # another connection sees the charge
        return {"value": 41.5, "raw": "owner only"}

    release, result = charged_release(
        reg, "htf", "d", [Mechanism("laplace", 1.5)], "secure", {"p": 1}, compute,
        artefact_of=lambda r: {"value": r["value"]},
    )  # fmt: skip
    assert seen == [1.5] and result["raw"] == "owner only"
    assert release.status is Status.RELEASED and release.artefact == {"value": 41.5}


def test_refusal_computes_nothing_and_failure_keeps_the_charge(reg):
    def never():
        raise AssertionError("computed after a refusal")

    with pytest.raises(BudgetExceededError, match="remaining epsilon 2 of 2"):
        charged_release(reg, "htf", "d", [Mechanism("m", 3.0)], "secure", {}, never, dict)

    def broken():
        raise InputError("the column holds text")

    with pytest.raises(InputError, match="stands"):
        charged_release(reg, "htf", "d", [Mechanism("m", 1.0)], "secure", {}, broken, dict)
    assert reg.spent("d") == (1.0, 0.0)
    assert reg.releases("d")[-1].status is Status.FAILED
