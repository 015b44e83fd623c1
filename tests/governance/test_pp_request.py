"""Issue 28: `core.governance.pp.pp_request` is the one place a PP request is built. Its cost,
claim and (ρ1, ρ2) come from the `PPPrepared`; the checks that need no data come before the
charge (nothing is read for an analyst); a failure after the charge is recorded as failed and
the charge stands."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from core.balancing.service import PPParams, PPSource, prepare, run
from core.errors import InputError
from core.governance import Role, govern
from core.governance.flow import ComputeFailed
from core.governance.origin import Origin
from core.governance.pp import pp_request
from core.privacy import Noise
from core.registry import Policy, Registry, Tool
from ui.pp.params import PPSettings, ReleaseOptions, page_params

N = 500


@pytest.fixture
def reg(tmp_path, registry_dir):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "person": np.arange(N),
            "race": rng.choice(["a", "b", "c", "d"], N, p=[0.5, 0.3, 0.15, 0.05]).astype(object),
            "precinct": rng.integers(1, 5, N),
        }
    )
    frame.loc[7, "race"] = None
    path = tmp_path / "stops.csv"
    frame.to_csv(path, index=False)
    registry = Registry()
    registry.add_dataset("stops", [("t", path)], Policy(5.0, 1e-3), uid="person",
                         publishable=("precinct",))  # fmt: skip
    return registry, path


def _params(**kw) -> PPParams:
    return PPParams("race", 3 / 10, 6 / 10, **kw)


def test_the_request_takes_cost_claim_and_rho_from_the_prepared_publication(reg):
    registry, path = reg
    ds = registry.dataset("stops")
    prepared = prepare(_params(missing="drop", columns=("precinct",)), PPSource.of_file(path, ds))
    request = pp_request(prepared, role=Role.ANALYST, dataset=ds, noise=Noise.secure(),
                         door=Origin.app("s-1"))  # fmt: skip
    assert request.tool == Tool.PP.value and request.cost == prepared.cost
    assert request.claim == prepared.claim and request.rho == prepared.rho
    assert request.claim.unit_column == "person" and request.claim.rho1 == "3/10"
    assert request.params["via"] == "app" and request.params["session"] == "s-1" and request.params["columns"] == ["race", "precinct"]
    # the page's door gives the same request
    page = prepare(
        page_params(PPSettings("k", "race", "0.3", "0.6", "drop", "stable", "none"),
                    ReleaseOptions(("race", "precinct"), 1.0, None, False)),
        PPSource.of_frame(pd.read_csv(path), ds),
    )  # fmt: skip
    other = pp_request(page, role=Role.ANALYST, dataset=ds, noise=Noise.secure())
    assert (other.cost, other.claim, other.rho) == (request.cost, request.claim, request.rho)


def test_a_request_for_another_dataset_than_prepared_is_a_bug(reg):
    registry, path = reg
    prepared = prepare(_params(missing="drop"), PPSource.of_file(path))
    with pytest.raises(ValueError):
        pp_request(prepared, role=Role.OWNER, dataset=registry.dataset("stops"),
                   noise=Noise.secure())  # fmt: skip


def test_an_analyst_s_missing_rule_comes_before_the_charge_and_reads_nothing(reg, tmp_path):
    registry, path = reg
    ds = registry.dataset("stops")
    copy = tmp_path / "copy.csv"
    shutil.copy(path, copy)
    prepared = prepare(_params(), PPSource.of_file(copy, ds))  # missing: not declared
    copy.unlink()  # any read of the data now fails with another message
    request = pp_request(prepared, role=Role.ANALYST, dataset=ds, noise=Noise.secure())

    def compute(_accountant):
        raise AssertionError("computed although refused")

    with pytest.raises(InputError, match="--missing drop"):
        govern(registry, request, compute, lambda r: {})
    assert registry.spent("stops") == (0.0, 0.0) and registry.releases("stops") == []


def test_the_owner_is_asked_before_the_charge_when_values_are_missing(reg):
    registry, path = reg
    ds = registry.dataset("stops")
    prepared = prepare(_params(), PPSource.of_frame(pd.read_csv(path), ds))
    request = pp_request(prepared, role=Role.OWNER, dataset=ds, noise=Noise.secure())
    with pytest.raises(InputError, match="1 missing value"):
        govern(registry, request, lambda a: None, lambda r: {})
    assert registry.spent("stops") == (0.0, 0.0)


def test_a_failure_after_the_charge_is_failed_with_the_charge_standing(reg):
    registry, path = reg
    ds = registry.dataset("stops")
    prepared = prepare(_params(missing="category", categories=("a", "b", "c", "d")),
                       PPSource.of_file(path, ds))  # fmt: skip
    request = pp_request(prepared, role=Role.ANALYST, dataset=ds, noise=Noise.secure())

    def compute(accountant):
        run(prepared, accountant)  # draws, then an injected fault
        raise RuntimeError("injected after the charge")

    with pytest.raises(ComputeFailed, match="stands") as err:
        govern(registry, request, compute, lambda r: {})
    assert "injected" not in str(err.value)
    (release,) = registry.releases("stops")
    assert release.status.value == "failed"
    assert registry.spent("stops") == pytest.approx((prepared.cost.epsilon, 0.0))
    assert prepared.cost.delta == 0  # declared categories: no selection delta


def test_a_refusal_of_prepare_on_a_dataset_is_recorded_and_charges_nothing(
    reg, capsys, monkeypatch, tmp_path
):
    """The CLI's door: a column the owner did not declare is refused by `prepare` (header and
    declarations only), recorded as a refusal of the dataset, before anything is charged."""
    from core.cli import main

    registry, _ = reg
    monkeypatch.setenv("DPX_MODE", "analyst")
    argv = ["balance", "--dataset", "stops", "--sa", "race", "--rho1", "0.3", "--rho2", "0.6",
            "--perturb", "--out", str(tmp_path / "o.csv"), "--missing", "drop",
            "--columns", "person"]  # fmt: skip
    assert main(argv) == 2
    assert "not declared it publishable" in capsys.readouterr().err
    (refusal,) = registry.refusals("stops")
    assert "person" in refusal.reason and refusal.params["sa"] == "race"
    assert registry.spent("stops") == (0.0, 0.0) and registry.releases("stops") == []
