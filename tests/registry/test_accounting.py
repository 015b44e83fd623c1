"""A dataset's accounting (issue 33): chosen at registration, recorded, fixed after the first
release; under `pld` the charge composes every charged release's mechanisms plus the request
(privacy loss distributions at the dataset's total δ) inside the write transaction."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pld

from core.cli import main
from core.errors import BudgetExceededError, InputError
from core.privacy import Cost, Laplace, NoisyThreshold
from core.privacy.accounting import Accounting
from core.registry import Policy, Registry, RunKind
from core.registry.store import FILE_NAME, MIGRATIONS, schema_version

ROOT = Path(__file__).resolve().parents[2]


def _add(reg, table, name="d", accounting="pld", eps=5.0, delta=1e-6, **caps):
    policy = Policy(eps, delta, caps.get("max_eps"), caps.get("max_delta"))
    return reg.add_dataset(name, [("t", table)], policy, accounting=accounting)


def _lap(eps=0.1):
    return Laplace("sum", sensitivity=1.0, epsilon=eps)


def _release(reg, mechanisms, dataset="d"):
    return reg.charge("sql", dataset, {"q": 1}, list(mechanisms), "secure")


def direct(eps_counts: dict[float, int], delta: float) -> float:
    """dp-accounting called directly: ε-DP pairs composed, ε at delta."""
    total = None
    for eps, n in eps_counts.items():
        one = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, 0.0))
        part = one.self_compose(n)
        total = part if total is None else total.compose(part)
    return total.get_epsilon_for_delta(delta)


def test_the_choice_is_stored_recorded_and_basic_by_default(reg, table):
    assert _add(reg, table, "b", accounting="basic").accounting is Accounting.BASIC
    assert reg.add_dataset("plain", [("t", table)], Policy(1.0)).accounting is Accounting.BASIC
    d = _add(reg, table)
    assert d.accounting is Accounting.PLD and reg.dataset("d").accounting is Accounting.PLD
    assert [(b, a) for _, b, a in reg.accounting_history("d")] == [(None, "pld")]
    with pytest.raises(InputError, match="unknown accounting 'rdp'"):
        reg.add_dataset("x", [("t", table)], Policy(1.0), accounting="rdp")


def test_pld_accepts_what_basic_refuses_and_refuses_beyond_its_budget(reg, table):
    """Budget (5, 1e-6): basic admits 50 releases of ε 0.1; pld admits 100 (ε 4.77 < 5)."""
    _add(reg, table, "b", accounting="basic")
    _add(reg, table, "p")
    for _ in range(50):
        _release(reg, [_lap()], "b")
    with pytest.raises(BudgetExceededError, match="exceeded"):
        _release(reg, [_lap()], "b")
    for _ in range(100):
        _release(reg, [_lap()], "p")
    eps, delta = reg.spent("p")
    assert eps == pytest.approx(direct({0.1: 100}, 1e-6), abs=1e-9) and delta == 0.0
    basic = reg.composition("p").basic
    assert eps < 5.0 and (basic.epsilon, basic.delta) == (pytest.approx(10.0), 0.0)
    assert reg.remaining("p")[0] == pytest.approx(5.0 - eps)
    with pytest.raises(BudgetExceededError, match=r"pld accounting.*Nothing was charged"):
        _release(reg, [_lap(1.0)], "p")
    assert len(reg.releases("p", RunKind.RELEASE)) == 100 and len(reg.refusals("p")) == 1
    # the composed total after a further admitted release stays within the total
    while True:
        try:
            _release(reg, [_lap()], "p")
        except BudgetExceededError:
            break
    n = len(reg.releases("p", RunKind.RELEASE))
    assert reg.spent("p")[0] <= 5.0 + 1e-9 < direct({0.1: n + 1}, 1e-6)


def test_registry_spend_agrees_with_dp_accounting_on_the_recorded_mechanisms(reg, table):
    _add(reg, table, delta=1e-5)
    th = NoisyThreshold("groups", sensitivity=1, epsilon=0.05, delta=1e-7, threshold=40)
    for _ in range(20):
        _release(reg, [th, _lap(0.05), Laplace("n", sensitivity=5.0, epsilon=0.05)])
    reg.charge("sql", "d", {"q": 2}, Cost(0.2), "secure")  # charged by cost: an ε 0.2 claim
    comp = reg.composition("d")
    # thresholds' δ on top (Σδ = 2e-6), every ε inside the PLD at 1e-5 − 2e-6
    assert comp.spent.delta == pytest.approx(2e-6)
    assert comp.epsilon == pytest.approx(direct({0.05: 60, 0.2: 1}, 1e-5 - 2e-6), abs=1e-9)
    basic = reg.composition("d", Accounting.BASIC)
    assert (basic.epsilon, basic.delta) == (pytest.approx(3.2), pytest.approx(2e-6))
    assert comp.epsilon <= basic.epsilon


def test_pld_never_exceeds_basic_even_with_a_pure_budget(reg, table):
    _add(reg, table, delta=0.0)  # δ total 0: no slack for the PLD, basic stands
    for _ in range(10):
        _release(reg, [_lap(0.3)])
    assert reg.spent("d") == (pytest.approx(3.0), 0.0)
    for _ in range(6):
        _release(reg, [_lap(0.3)])
    with pytest.raises(BudgetExceededError):
        _release(reg, [_lap(0.3)])  # 5.1 > 5: refused, as under basic


def test_the_delta_part_must_fit(reg, table):
    _add(reg, table, delta=1e-6)
    th = NoisyThreshold("groups", sensitivity=1, epsilon=0.05, delta=6e-7, threshold=40)
    _release(reg, [th])
    with pytest.raises(BudgetExceededError, match="delta is short"):
        _release(reg, [th])
    assert reg.spent("d")[1] == pytest.approx(6e-7)


def test_per_query_caps_take_the_request_alone(reg, table):
    _add(reg, table, max_eps=0.5)
    with pytest.raises(BudgetExceededError, match="max_epsilon_per_query = 0.5"):
        _release(reg, [_lap(0.3), _lap(0.3)])


def test_the_choice_cannot_be_changed_after_the_first_release(reg, table):
    _add(reg, table, accounting="basic")
    reg.set_accounting("d", "pld")  # before any release: allowed, recorded
    assert reg.dataset("d").accounting is Accounting.PLD
    assert [(b, a) for _, b, a in reg.accounting_history("d")] == [
        (None, "basic"),
        ("basic", "pld"),
    ]
    _release(reg, [_lap()])
    with pytest.raises(InputError, match="cannot be changed after the first release"):
        reg.set_accounting("d", "basic")
    _add(reg, table, "e", accounting="basic")
    _release(reg, [_lap()], "e")
    with pytest.raises(InputError, match="cannot be changed after the first release"):
        reg.set_accounting("e", "pld")
    assert reg.dataset("e").accounting is Accounting.BASIC
    assert len(reg.accounting_history("e")) == 1


def test_lowering_the_total_delta_below_what_pld_needs_is_refused(reg, table):
    _add(reg, table, delta=1e-6)
    for _ in range(100):
        _release(reg, [_lap()])
    with pytest.raises(InputError, match="there is no reset"):
        reg.set_budget("d", delta=0.0)  # at δ 0 the 100 releases spend ε 10 > 5
    reg.set_budget("d", delta=1e-5)
    assert reg.spent("d")[0] == pytest.approx(direct({0.1: 100}, 1e-5), abs=1e-9)


def test_a_v4_registry_is_migrated_to_v5_as_basic(registry_dir, table):
    reg = Registry(registry_dir)
    _add(reg, table, accounting="basic")
    reg.close()
    con = sqlite3.connect(registry_dir / FILE_NAME)
    con.execute("DROP TABLE accounting_changes")
    con.execute("ALTER TABLE datasets DROP COLUMN accounting")
    con.execute("DELETE FROM schema_version WHERE version >= 5")  # v6 (shares) re-runs: idempotent
    con.commit()
    con.close()
    again = Registry(registry_dir)
    assert schema_version(again._con) == len(MIGRATIONS) == 7
    assert again.dataset("d").accounting is Accounting.BASIC


def test_dpx_dataset_add_accounting_and_show_prints_both(capsys, tmp_path, table):
    reg_dir = tmp_path / "r"
    code = main(
        ["dataset", "add", "d", "--table", f"t={table}", "--uid", "uid", "--epsilon", "5",
         "--delta", "1e-6", "--accounting", "pld", "--registry", str(reg_dir)]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "accounting: pld" in out
    reg = Registry(reg_dir)
    for _ in range(60):
        _release(reg, [_lap()])
    assert main(["dataset", "show", "d", "--registry", str(reg_dir)]) == 0
    out = capsys.readouterr().out
    assert "spent under basic: epsilon 6, delta 0" in out
    pld_eps = direct({0.1: 60}, 1e-6)
    assert f"under pld (this dataset's): epsilon {pld_eps:g}" in out
    assert main(["dataset", "show", "d", "--json", "--registry", str(reg_dir)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["accounting"] == "pld"
    assert info["spent_by_accounting"]["basic"]["epsilon"] == pytest.approx(6.0)
    assert info["epsilon_spent"] == pytest.approx(pld_eps, abs=1e-9)
    assert info["epsilon_remaining"] == pytest.approx(5 - pld_eps, abs=1e-9)
    assert main(["dataset", "add", "x", "--table", f"t={table}", "--uid", "uid", "--epsilon",
                 "5", "--accounting", "rdp", "--registry", str(reg_dir)]) != 0  # fmt: skip


CHARGER = """
import sys
from core.errors import BudgetExceededError
from core.privacy import Laplace
from core.registry import Registry
reg = Registry(sys.argv[1])
try:
    reg.charge("sql", "d", {}, [Laplace("x", sensitivity=1.0, epsilon=1.0)], "secure")
except BudgetExceededError:
    sys.exit(2)
"""


def test_concurrent_charges_never_overspend_under_pld(registry_dir, table):
    """Budget (3, 1e-6), each request ε 1: three compose to < 3, four to > 3 — whatever the
    order, exactly three of six concurrent processes are charged (the check holds the lock)."""
    reg = Registry(registry_dir)
    _add(reg, table, eps=3.0)
    assert direct({1.0: 3}, 1e-6) <= 3.0 < direct({1.0: 4}, 1e-6)
    procs = [
        subprocess.Popen([sys.executable, "-c", CHARGER, str(registry_dir)], cwd=ROOT,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(6)
    ]  # fmt: skip
    codes = [p.wait(timeout=300) for p in procs]
    assert sorted(codes) == [0, 0, 0, 2, 2, 2], [p.stderr.read() for p in procs]
    assert len(reg.releases("d", RunKind.RELEASE)) == 3 and len(reg.refusals("d")) == 3
    assert reg.spent("d")[0] == pytest.approx(direct({1.0: 3}, 1e-6), abs=1e-9)
