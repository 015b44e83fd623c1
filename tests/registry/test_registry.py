"""The registry: datasets, atomic charging, caps, refusals, budget history, persistence."""

import json
import socket
import sqlite3
import subprocess
import sys

import pytest

from core.errors import BudgetExceededError, InputError
from core.privacy import Cost, DiscreteLaplace
from core.registry import Policy, Registry, RunKind, Status
from core.registry.store import FILE_NAME, MIGRATIONS, schema_version


def _add(reg, table, name="d", **policy):
    return reg.add_dataset(name, [("t", table)], Policy(**{"epsilon_total": 5.0, **policy}))


def test_created_on_first_use_with_current_schema_version(registry_dir):
    assert not registry_dir.exists()
    Registry(registry_dir)
    con = sqlite3.connect(registry_dir / FILE_NAME)
    assert schema_version(con) == len(MIGRATIONS)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    Registry(registry_dir)  # reopening migrates nothing twice
    assert schema_version(con) == len(MIGRATIONS)


def test_dataset_round_trip_with_sha256(reg, table):
    import hashlib

    d = _add(reg, table, epsilon_total=3.0, delta_total=1e-6, max_epsilon_per_query=1.0)
    again = reg.dataset("d")
    assert again == d
    assert again.tables[0].sha256 == hashlib.sha256(table.read_bytes()).hexdigest()
    assert again.policy == Policy(3.0, 1e-6, 1.0, None)


def test_duplicate_and_bad_names_are_refused(reg, table):
    _add(reg, table)
    with pytest.raises(InputError, match="already registered"):
        _add(reg, table)
    with pytest.raises(InputError, match="not allowed"):
        _add(reg, table, name="../x")


def test_changed_file_is_refused(reg, table):
    d = _add(reg, table)
    reg.verify_files(d)
    table.write_text("uid,x\n1,2\n2,4\n")
    with pytest.raises(InputError, match="changed since registration"):
        reg.verify_files(d)


def _charge(reg, eps, delta=0.0, dataset="d", mode="secure"):
    return reg.charge("sql", dataset, {"q": 1}, Cost(eps, delta), mode)


def test_charges_add_up_and_overspend_is_refused_and_recorded(reg, table):
    _add(reg, table)
    _charge(reg, 2.0)
    _charge(reg, 2.5)
    assert reg.spent("d") == (4.5, 0.0)
    with pytest.raises(BudgetExceededError, match="remaining epsilon 0.5 of 5"):
        _charge(reg, 1.0)
    assert reg.spent("d") == (4.5, 0.0)  # a refusal charges nothing
    refusals = reg.refusals("d")
    assert len(refusals) == 1 and "remaining epsilon 0.5" in refusals[0].reason
    _charge(reg, 0.5)  # the exact remainder still fits
    assert reg.remaining("d")[0] == pytest.approx(0.0)


def test_delta_budget_and_caps(reg, table):
    _add(reg, table, delta_total=1e-5, max_epsilon_per_query=1.0, max_delta_per_query=1e-6)
    with pytest.raises(
        BudgetExceededError,
        match=r"per-query cap max_epsilon_per_query = 1 .*Fix: lower epsilon to <= 1",
    ):
        _charge(reg, 1.5)
    with pytest.raises(BudgetExceededError, match=r"per-query cap max_delta_per_query = 1e-06"):
        _charge(reg, 0.5, delta=2e-6)
    _charge(reg, 1.0, delta=1e-6)
    assert reg.spent("d") == (1.0, 1e-6)
    assert len(reg.refusals("d")) == 2


def test_seeded_refused_unless_teaching_and_never_counted(reg, table):
    _add(reg, table)
    with pytest.raises(BudgetExceededError, match="not flagged --teaching"):
        _charge(reg, 1.0, mode="seeded")
    reg.add_dataset("teach", [("t", table)], Policy(1.0), teaching=True)
    runs = [_charge(reg, 1.0, dataset="teach", mode="seeded") for _ in range(3)]
    assert all(r.kind is RunKind.DEMO for r in runs)
    assert reg.spent("teach") == (0.0, 0.0)
    assert reg.refusals("d")[0].reason.startswith("seeded (demo) noise is refused")


def test_unregistered_runs_are_recorded_not_limited(reg):
    for _ in range(3):
        run = _charge(reg, 100.0, dataset=None)
        assert run.kind is RunKind.UNREGISTERED
    assert len(reg.releases(kind=RunKind.UNREGISTERED)) == 3


def test_attach_records_the_mechanisms_that_drew_and_fail_keeps_the_charge(reg, table):
    _add(reg, table)
    rel = _charge(reg, 1.0)
    assert rel.status is Status.CHARGED and rel.artefact is None and rel.mechanisms == ()
    drew = [
        DiscreteLaplace("a", sensitivity=1, epsilon=0.4),
        DiscreteLaplace("b", sensitivity=2, epsilon=0.6),
    ]
    done = reg.attach(rel.id, {"rows": [[1, 2.5]]}, drew)
    assert done.status is Status.RELEASED and done.artefact == {"rows": [[1, 2.5]]}
    assert len(done.artefact_sha256) == 64 and done.mechanisms == tuple(drew)
    assert done.mechanisms[1].scale == 2 / 0.6  # read back as the typed object
    with pytest.raises(ValueError, match="charged epsilon 1"):
        reg.attach(rel.id, {}, [DiscreteLaplace("c", sensitivity=1, epsilon=1.5)])
    failed = _charge(reg, 1.0)
    reg.fail(failed.id, "stopped")
    assert reg.release(failed.id).status is Status.FAILED
    assert reg.spent("d") == (2.0, 0.0)  # a failed computation stays charged


def test_releases_filter_by_session_and_status_in_sql(reg, table):
    """A page asks for its session's releases on every rerun: the registry answers exactly them
    (params.session), in id order, and can filter by status; the other rows are not decoded."""
    _add(reg, table)
    mine = [reg.charge("sql", "d", {"session": "s-1"}, Cost(0.1), "secure") for _ in range(2)]
    reg.charge("sql", "d", {"session": "s-2"}, Cost(0.1), "secure")
    reg.charge("sql", None, {"session": "s-1"}, Cost(0.1), "secure")
    reg.charge("sql", "d", {"q": "no session"}, Cost(0.1), "secure")
    assert [r.id for r in reg.releases("d", session="s-1")] == [r.id for r in mine]
    assert len(reg.releases(session="s-1")) == 3 and reg.releases(session="s-3") == []
    reg.fail(mine[0].id, "stopped")
    charged = reg.releases("d", session="s-1", statuses=(Status.CHARGED,))
    assert [r.id for r in charged] == [mine[1].id]
    with reg._write() as con:  # a row that cannot be decoded is never read when not asked for
        con.execute("UPDATE releases SET mechanisms='not json' WHERE params LIKE '%s-2%'")
    assert len(reg.releases("d", session="s-1")) == 2


def test_list_views_read_no_artefact_body(reg, table):
    """`releases(bodies=False)` (the Releases page, the not-shown checks) says whether a body is
    stored without reading it: a body can be megabytes, and the list reads every row."""
    _add(reg, table)
    kept = _charge(reg, 0.5)
    reg.attach(kept.id, {"rows": [[1, 2.5]]})
    bare = _charge(reg, 0.5)
    with reg._write() as con:  # a body that cannot be decoded: never read by a list view
        con.execute("UPDATE releases SET artefact=? WHERE id=?", (b"not a body", kept.id))
    listed = {r.id: r for r in reg.releases("d", bodies=False)}
    assert listed[kept.id].body_kept and listed[kept.id].artefact is None
    assert not listed[bare.id].body_kept
    with pytest.raises(Exception):  # noqa: B017 - reading the body is what fails
        reg.releases("d")


def test_stranded_charges_are_listed_and_reconciled_keeping_the_charge(reg, table):
    _add(reg, table)
    live = _charge(reg, 0.5)  # charged by this (running) process: not stranded
    dead = _charge(reg, 0.5)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    with reg._write() as con:  # as if charged by a process that has since died
        con.execute(
            "UPDATE releases SET worker=? WHERE id=?",
            (f"{socket.gethostname()}:{int(gone.stdout)}", dead.id),
        )
    undelivered = _charge(reg, 0.5)
    reg.mark_undelivered(undelivered.id, "the disk was full when the artefact was recorded")
    assert {r.id for r in reg.stranded("d")} == {dead.id, undelivered.id}
    closed = reg.reconcile("d")
    assert {r.id for r in closed} == {dead.id, undelivered.id}
    assert all(r.status is Status.FAILED and "not delivered" in r.note for r in closed)
    assert "disk was full" in reg.release(undelivered.id).note
    assert reg.release(live.id).status is Status.CHARGED and reg.stranded("d") == []
    assert reg.spent("d") == (1.5, 0.0)  # charge before compute: every charge stays


def test_budget_changes_are_recorded_and_cannot_go_below_spent(reg, table):
    _add(reg, table)
    _charge(reg, 4.0)
    change = reg.set_budget("d", epsilon=8.0)
    assert (change.epsilon_before, change.epsilon_after) == (5.0, 8.0)
    with pytest.raises(InputError, match="no reset"):
        reg.set_budget("d", epsilon=3.0)
    assert [c.epsilon_after for c in reg.budget_history("d")] == [8.0]
    assert reg.remaining("d")[0] == pytest.approx(4.0)


def test_committed_charge_survives_a_killed_process(registry_dir, table):
    """A process that charged and was then killed (no clean close) leaves the charge."""
    reg = Registry(registry_dir)
    _add(reg, table)
    reg.close()
    code = (
        "import os; from core.registry import Registry; from core.privacy import Cost\n"
        f"r = Registry({str(registry_dir)!r})\n"
        "r.charge('location', 'd', {}, Cost(1.5), 'secure')\n"
        "os._exit(9)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    reopened = Registry(registry_dir)
    assert reopened.spent("d") == (1.5, 0.0)
    assert reopened.releases("d")[0].status is Status.CHARGED


def test_newer_schema_is_refused(registry_dir):
    Registry(registry_dir).close()
    con = sqlite3.connect(registry_dir / FILE_NAME)
    con.execute("INSERT INTO schema_version VALUES (?)", (len(MIGRATIONS) + 5,))
    con.commit()
    with pytest.raises(InputError, match="newer than this dpx"):
        Registry(registry_dir)


def test_params_are_stored_as_json(reg, table):
    _add(reg, table)
    rel = reg.charge("sql", "d", {"query": "SELECT 1", "eps": 1.0}, Cost(1.0), "secure")
    assert json.loads(json.dumps(reg.release(rel.id).params)) == {"query": "SELECT 1", "eps": 1.0}
