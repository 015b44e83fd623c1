"""Per-analyst shares (issue 33, core.registry.shares): refused before the charge when a
release exceeds the analyst's share, exact under 16 concurrent processes, whole or absent after
kill -9, recorded, migrated, and shown by `dpx dataset show`."""

import json
import multiprocessing
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.cli import main
from core.errors import BudgetExceededError, InputError
from core.governance import Request, Role, RoleError, govern
from core.privacy import Cost, DiscreteLaplace
from core.registry import Claim, Policy, Registry, RunKind
from core.registry.store import FILE_NAME, MIGRATIONS, schema_version

ROOT = Path(__file__).resolve().parents[2]


def _add(reg, table, name="d", epsilon=100.0, delta=1e-5):
    return reg.add_dataset(name, [("t", table)], Policy(epsilon, delta), uid="uid")


def _charge(reg, eps, analyst=None, delta=0.0, dataset="d"):
    return reg.charge("sql", dataset, {}, Cost(eps, delta), "secure", None, analyst)


def test_a_release_beyond_the_share_is_refused_before_the_charge(reg, table):
    _add(reg, table)
    share = reg.set_share("d", "alice", 1.0, 1e-6)
    assert (share.epsilon, share.delta, share.epsilon_spent) == (1.0, 1e-6, 0.0)
    _charge(reg, 0.6, "alice")
    with pytest.raises(BudgetExceededError, match="analyst 'alice''s share of dataset 'd'"):
        _charge(reg, 0.5, "alice")
    with pytest.raises(BudgetExceededError, match="delta"):
        _charge(reg, 0.1, "alice", delta=2e-6)
    assert reg.spent("d") == (0.6, 0.0)  # nothing of the refused requests was charged
    assert len(reg.refusals("d")) == 2
    _charge(reg, 0.4, "alice")
    [s] = reg.shares("d")
    assert (s.analyst, s.epsilon_spent, s.delta_spent) == ("alice", pytest.approx(1.0), 0.0)
    _charge(reg, 5.0)  # the owner's release: the dataset only
    assert [x.epsilon_spent for x in reg.shares("d")] == [pytest.approx(1.0)]


def test_the_dataset_total_still_binds_a_share(reg, table):
    _add(reg, table, epsilon=2.0)
    reg.set_share("d", "alice", 2.0)
    _charge(reg, 1.5)  # the owner
    with pytest.raises(BudgetExceededError, match="privacy budget of dataset 'd' exceeded"):
        _charge(reg, 1.0, "alice")


def test_shares_are_recorded_never_reset_and_fail_closed(reg, table):
    _add(reg, table)
    _charge(reg, 1.0, "bob")  # no shares yet: an analyst is limited by the dataset only
    reg.set_share("d", "alice", 1.0)
    with pytest.raises(BudgetExceededError, match="analyst 'bob' has no share"):
        _charge(reg, 0.1, "bob")
    _charge(reg, 0.5, "alice")
    with pytest.raises(InputError, match="no reset"):
        reg.set_share("d", "alice", 0.4)
    with pytest.raises(InputError, match="above dataset 'd''s total"):
        reg.set_share("d", "alice", 101.0)
    with pytest.raises(InputError, match="not a valid identity"):
        reg.set_share("d", "../x", 1.0)
    reg.set_share("d", "alice", 2.0)
    history = reg.share_history("d")
    assert [(h["epsilon_before"], h["epsilon_after"]) for h in history] == [(None, 1.0), (1.0, 2.0)]


def test_governed_analyst_release_is_charged_to_the_declared_identity(reg, table, monkeypatch):
    _add(reg, table)
    reg.set_share("d", "alice", 0.5)
    d = reg.dataset("d")
    mech = DiscreteLaplace("c", sensitivity=1, epsilon=0.3)

    def request():
        return Request("sql", Role.ANALYST, d, {}, mech.cost, Claim("u"), _noise())

    def compute(acc):
        return mech.draw(acc, [1, 2]).tolist()

    monkeypatch.delenv("DPX_ANALYST", raising=False)
    with pytest.raises(RoleError, match="declare who you are"):
        govern(reg, request(), compute, lambda r: {"v": r})
    monkeypatch.setenv("DPX_ANALYST", "alice")
    govern(reg, request(), compute, lambda r: {"v": r})
    with pytest.raises(BudgetExceededError, match="alice"):
        govern(reg, request(), compute, lambda r: {"v": r})
    assert reg.shares("d")[0].epsilon_spent == pytest.approx(0.3)


def _noise():
    from core.privacy import Noise

    return Noise.secure()


def _spend_until_refused(directory: str, barrier, out) -> None:
    reg = Registry(directory)
    barrier.wait()
    ok = refused = 0
    while True:
        try:
            reg.charge("sql", "d", {}, Cost(0.1, 1e-7), "secure", None, "alice")
            ok += 1
        except BudgetExceededError:
            refused += 1
            if refused >= 3:
                break
    out.put((ok, refused))


def test_sixteen_concurrent_processes_never_overspend_a_share(registry_dir, table):
    reg = Registry(registry_dir)
    _add(reg, table, epsilon=100.0, delta=1e-3)
    reg.set_share("d", "alice", 2.0, 1.5e-6)  # 15 releases by δ (20 by ε): δ binds
    reg.close()
    # fork: each child opens its own connection (the parent holds none)
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(16), ctx.Queue()
    procs = [
        ctx.Process(target=_spend_until_refused, args=(str(registry_dir), barrier, out))
        for _ in range(16)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    results = [out.get(timeout=10) for _ in procs]
    assert sum(ok for ok, _ in results) == 15
    again = Registry(registry_dir)
    [share] = again.shares("d")
    assert share.epsilon_spent == pytest.approx(1.5, abs=1e-12)
    assert share.delta_spent <= share.delta * (1 + 1e-12)
    assert again.spent("d") == (pytest.approx(1.5), pytest.approx(1.5e-6))
    assert len(again.releases("d", RunKind.RELEASE)) == 15
    assert len(again.refusals("d")) == 16 * 3


CHARGER = textwrap.dedent(
    """
    import sys
    from core.privacy import Cost
    from core.registry import Registry
    reg = Registry(sys.argv[1])
    print("ready", flush=True)
    for i in range(100_000):
        reg.charge("sql", "d", {"i": i}, Cost(0.001), "secure", None, "alice")
    """
)


def test_kill_minus_9_mid_charge_leaves_the_share_whole(registry_dir, table):
    """A process charging in a loop is killed with SIGKILL at an arbitrary moment: every
    release row is whole, and the share's spend is exactly the sum of those rows (never a
    dataset charge without its share charge, or the reverse: they are one row)."""
    reg = Registry(registry_dir)
    _add(reg, table)
    reg.set_share("d", "alice", 50.0)
    reg.close()
    for delay in (0.3, 0.7):
        proc = subprocess.Popen(
            [sys.executable, "-c", CHARGER, str(registry_dir)],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(delay)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL
    con = sqlite3.connect(registry_dir / FILE_NAME)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = con.execute("SELECT epsilon, analyst FROM releases WHERE dataset='d'").fetchall()
    con.close()
    assert rows and all(r == (0.001, "alice") for r in rows)
    again = Registry(registry_dir)
    [share] = again.shares("d")
    assert share.epsilon_spent == pytest.approx(0.001 * len(rows), abs=1e-12)
    assert again.spent("d")[0] == pytest.approx(share.epsilon_spent, abs=1e-12)


def test_a_v5_registry_is_migrated_to_v6(registry_dir, table):
    reg = Registry(registry_dir)
    _add(reg, table)
    _charge(reg, 1.0)
    reg.close()
    con = sqlite3.connect(registry_dir / FILE_NAME)
    con.execute("DROP TABLE analyst_shares")
    con.execute("DROP TABLE share_changes")
    con.execute("DROP INDEX releases_by_analyst")
    con.execute("ALTER TABLE releases DROP COLUMN analyst")
    con.execute("DELETE FROM schema_version WHERE version >= 6")
    con.commit()
    con.close()
    again = Registry(registry_dir)
    assert schema_version(again._con) == len(MIGRATIONS) == 7
    assert again.shares("d") == [] and again.spent("d") == (1.0, 0.0)
    again.set_share("d", "alice", 1.0)
    again.charge("sql", "d", {}, Cost(0.5), "secure", None, "alice")
    assert again.shares("d")[0].epsilon_spent == 0.5


def test_dpx_dataset_share_is_the_owners_and_show_lists_shares(
    registry_dir, table, capsys, monkeypatch
):
    _add(Registry(registry_dir), table)
    argv = ["dataset", "share", "d", "--analyst", "alice", "--epsilon", "1", "--delta", "1e-6"]
    monkeypatch.setenv("DPX_MODE", "analyst")
    assert main(argv) == 2
    assert "for the data owner" in capsys.readouterr().err
    monkeypatch.delenv("DPX_MODE")
    assert main(argv) == 0
    assert "analyst alice may spend epsilon 1" in capsys.readouterr().out
    assert main(["dataset", "show", "d", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["shares"] == [
        {"analyst": "alice", "epsilon": 1.0, "delta": 1e-6, "epsilon_spent": 0.0,
         "delta_spent": 0.0, "epsilon_remaining": 1.0, "delta_remaining": 1e-6}
    ]  # fmt: skip
    assert main(["dataset", "show", "d"]) == 0
    assert "alice: epsilon spent 0 of 1" in capsys.readouterr().out
    assert main([*argv[:4], "../x", *argv[5:]]) == 2
