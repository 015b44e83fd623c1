"""The governed flow: policies before the charge, the charge before any compute, the mechanisms
that drew recorded as the rows, failures that keep the charge, and analyst-role refusals."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import BudgetExceededError, InputError
from core.governance import (
    ComputeFailed,
    Request,
    Role,
    RoleError,
    Undelivered,
    check_fits,
    current_role,
    govern,
)
from core.privacy import Cost, DiscreteLaplace, Laplace, Noise, Overdraw
from core.registry import Claim, Policy, Registry, RunKind, Status
from core.registry.store import RegistryError


@pytest.fixture
def reg(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    r = Registry(tmp_path / "reg")
    r.add_dataset("d", [("t", table)], Policy(2.0, 1e-5), uid="uid")
    r.add_dataset("teach", [("t", table)], Policy(1.0), uid="uid", teaching=True)
    return r


ONE = Cost(1.0)


def request(reg, dataset="d", role=Role.OWNER, noise=None, cost=ONE, checks=()):
    return Request(
        tool="location",
        role=role,
        dataset=None if dataset is None else reg.dataset(dataset),
        params={"epsilon": cost.epsilon},
        cost=cost,
        claim=Claim("one point", None),
        noise=noise or Noise.secure(),
        extra_checks=checks,
    )


def two_mechanisms(accountant):
    a = DiscreteLaplace("counts", sensitivity=1, epsilon=0.6)
    b = Laplace("noisy N", sensitivity=1, epsilon=0.4)
    return {"counts": a.draw(accountant, np.arange(3)).tolist(), "n": b.draw(accountant, 10.0)}


def test_charge_then_compute_then_attach_the_mechanisms_that_drew(reg):
    seen_spent = []

    def compute(accountant):
        seen_spent.append(reg.spent("d"))  # already charged when compute starts
        return two_mechanisms(accountant)

    out = govern(reg, request(reg), compute, lambda r: {"values": r["counts"]})
    assert seen_spent == [(1.0, 0.0)]
    rec = out.record
    assert rec.status is Status.RELEASED and rec.kind is RunKind.RELEASE
    assert [m.label for m in rec.mechanisms] == ["counts", "noisy N"]
    assert rec.mechanisms[0].scale == pytest.approx(1 / 0.6)
    assert rec.artefact == {"values": out.result["counts"]}
    assert rec.claim.unit == "one point"


def test_policies_refuse_before_any_charge_and_are_recorded(reg):
    ran = []
    cases = [
        (request(reg, dataset=None, role=Role.ANALYST), RoleError, "registered datasets only"),
        (request(reg, role=Role.ANALYST, noise=Noise.seeded(1)), RoleError, "secure noise"),
        (request(reg, noise=Noise.seeded(1)), InputError, "not flagged --teaching"),
        (
            request(reg, checks=(lambda: (_ for _ in ()).throw(InputError("bad column")),)),
            InputError,
            "bad column",
        ),
        (request(reg, cost=Cost(5.0)), BudgetExceededError, "remaining epsilon 2"),
    ]
    for req, error, text in cases:
        with pytest.raises(error, match=text):
            govern(reg, req, lambda acc: ran.append(1), lambda r: {})
    assert ran == [] and reg.spent("d") == (0.0, 0.0)
    assert len(reg.refusals("d")) == 4  # the unregistered one has no dataset to record under


def test_seeded_teaching_run_is_a_labelled_demo_never_charged(reg):
    out = govern(reg, request(reg, "teach", noise=Noise.seeded(3)), two_mechanisms, lambda r: {})
    assert out.record.kind is RunKind.DEMO and reg.spent("teach") == (0.0, 0.0)


def test_a_failure_after_the_charge_keeps_it_and_withholds_details_from_an_analyst(reg):
    def boom(accountant):
        raise ValueError("secret raw value 123.456")

    with pytest.raises(ComputeFailed) as info:
        govern(reg, request(reg, role=Role.ANALYST), boom, lambda r: {})
    assert "123.456" not in str(info.value) and "charge of epsilon 1" in str(info.value)
    (rec,) = reg.releases("d")
    assert rec.status is Status.FAILED and "123.456" not in rec.note
    assert reg.spent("d") == (1.0, 0.0)


def test_a_draw_beyond_the_charge_never_draws(reg):
    def greedy(accountant):
        two_mechanisms(accountant)
        DiscreteLaplace("extra", sensitivity=1, epsilon=0.5).draw(accountant, [1])

    with pytest.raises(ComputeFailed):
        govern(reg, request(reg), greedy, lambda r: {})
    assert reg.releases("d")[0].status is Status.FAILED
    with pytest.raises(Overdraw):  # the accountant itself, outside the flow
        from core.privacy import Accountant

        acc = Accountant(Noise.seeded(1), Cost(0.1))
        DiscreteLaplace("x", sensitivity=1, epsilon=0.2).draw(acc, [1])


def test_a_registry_that_cannot_record_the_artefact_marks_the_run_undelivered(reg, monkeypatch):
    def full(*args, **kwargs):
        raise RegistryError("the disk is full")

    monkeypatch.setattr(Registry, "attach", full)
    with pytest.raises(Undelivered, match="could not be recorded"):
        govern(reg, request(reg), two_mechanisms, lambda r: {})
    (rec,) = reg.stranded("d")
    assert rec.status is Status.UNDELIVERED and "disk is full" in rec.note


def test_check_fits_refuses_a_set_that_cannot_fit_before_any_charge(reg):
    with pytest.raises(BudgetExceededError, match="3 release"):
        check_fits(reg, reg.dataset("d"), [Cost(1.0)] * 3, "location", {})
    assert reg.spent("d") == (0.0, 0.0) and len(reg.refusals("d")) == 1
    check_fits(reg, reg.dataset("d"), [Cost(1.0)] * 2, "location", {})


@pytest.mark.parametrize(
    "value,role",
    [(None, Role.OWNER), ("", Role.OWNER), ("owner", Role.OWNER), (" OWNER ", Role.OWNER),
     ("analyst", Role.ANALYST), ("admin", Role.ANALYST), ("0", Role.ANALYST)],
)  # fmt: skip
def test_unknown_modes_fail_closed_to_analyst(value, role):
    env = {} if value is None else {"DPX_MODE": value}
    assert current_role(env) is role
