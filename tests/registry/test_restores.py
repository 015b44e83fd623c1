"""Restores leave a trace (issue 27 item 5). The attack: the owner (or anyone with the file
system) takes a backup, releases twice at epsilon 1, then restores the backup: spent 2 -> 0
and the two releases are forgotten. Now a restore that lowers a dataset's spend is refused
unless explicitly allowed, and every restore is recorded in each dataset's budget history
(time, the backup's name and SHA-256, spent before and after)."""

from __future__ import annotations

import hashlib

import pytest

from core.errors import InputError
from core.privacy import Cost
from core.registry import ChangeKind, Policy, Registry
from core.registry.store import backup, restore
from tests.registry.helpers import as_v3_registry


def _registry(tmp_path, table, names=("d",)) -> Registry:
    reg = Registry(tmp_path / "reg")
    for name in names:
        reg.add_dataset(name, [("t", table)], Policy(5.0, 1e-5), uid="uid")
    return reg


def _release(reg, name="d", eps=1.0, delta=0.0):
    reg.charge("sql", name, {}, Cost(eps, delta), "secure")


def _restores(reg, name="d"):
    return [c for c in reg.budget_history(name) if c.kind is ChangeKind.RESTORE]


def test_a_restore_that_gives_budget_back_is_refused_and_changes_nothing(tmp_path, table):
    reg = _registry(tmp_path, table)
    copy = backup(tmp_path / "reg", tmp_path / "b.sqlite")
    _release(reg)
    _release(reg, delta=1e-6)
    with pytest.raises(InputError) as info:
        restore(copy, tmp_path / "reg", force=True)
    message = str(info.value)
    assert "'d' gets epsilon 2, delta 1e-06 back" in message
    assert "--allow-spend-decrease" in message and "\n" not in message
    again = Registry(tmp_path / "reg")
    assert again.spent("d") == (2.0, 1e-6) and len(again.releases("d")) == 2
    assert _restores(again) == []


def test_an_allowed_restore_is_recorded_with_spend_before_and_after(tmp_path, table):
    reg = _registry(tmp_path, table)
    copy = backup(tmp_path / "reg", tmp_path / "b.sqlite")
    _release(reg)
    _release(reg)
    reg.close()
    done = restore(copy, tmp_path / "reg", force=True, allow_spend_decrease=True)
    again = Registry(tmp_path / "reg")
    assert again.spent("d") == (0.0, 0.0)
    (entry,) = _restores(again)
    assert entry.backup == "b.sqlite"
    assert entry.backup_sha256 == hashlib.sha256(copy.read_bytes()).hexdigest()
    assert entry.spent_before == (2.0, 0.0) and entry.spent_after == (0.0, 0.0)
    assert entry.spend_returned == (2.0, 0.0)
    assert (entry.epsilon_before, entry.epsilon_after) == (5.0, 5.0) and entry.time
    assert done.changes[0].spent_before == (2.0, 0.0)


def test_a_restore_that_lowers_no_spend_needs_no_flag_and_is_recorded(tmp_path, table):
    reg = _registry(tmp_path, table)
    _release(reg)
    copy = backup(tmp_path / "reg", tmp_path / "b.sqlite")
    reg.close()
    restore(copy, tmp_path / "reg", force=True)
    (entry,) = _restores(Registry(tmp_path / "reg"))
    assert entry.spent_before == entry.spent_after == (1.0, 0.0)


def test_a_dataset_missing_from_the_backup_counts_as_budget_given_back(tmp_path, table):
    """Restoring a backup taken before a dataset was registered would let it be registered
    again with a fresh budget: its spend disappearing is a decrease, and is kept on record
    under its name."""
    reg = _registry(tmp_path, table, names=("a",))
    copy = backup(tmp_path / "reg", tmp_path / "b.sqlite")
    reg.add_dataset("late", [("t", table)], Policy(5.0), uid="uid")
    _release(reg, "late", 0.5)
    reg.close()
    with pytest.raises(InputError, match="'late' gets epsilon 0.5, delta 0 back"):
        restore(copy, tmp_path / "reg", force=True)
    restore(copy, tmp_path / "reg", force=True, allow_spend_decrease=True)
    again = Registry(tmp_path / "reg")
    assert again.find("late") is None
    again.add_dataset("late", [("t", table)], Policy(5.0), uid="uid")
    (entry,) = _restores(again, "late")
    assert entry.spent_before == (0.5, 0.0) and entry.spent_after is None
    assert "not in the backup" in entry.note


def test_an_earlier_restore_stays_on_record_after_a_later_one(tmp_path, table):
    reg = _registry(tmp_path, table)
    old = backup(tmp_path / "reg", tmp_path / "old.sqlite")  # before any restore
    _release(reg)
    first = backup(tmp_path / "reg", tmp_path / "first.sqlite")
    reg.close()
    restore(first, tmp_path / "reg", force=True)  # recorded, no decrease
    restore(old, tmp_path / "reg", force=True, allow_spend_decrease=True)
    entries = _restores(Registry(tmp_path / "reg"))
    assert [e.backup for e in entries] == ["first.sqlite", "old.sqlite"]
    assert [e.spent_after for e in entries] == [(1.0, 0.0), (0.0, 0.0)]


def test_total_changes_and_restores_share_one_history(tmp_path, table):
    reg = _registry(tmp_path, table)
    reg.set_budget("d", 8.0)
    _release(reg)
    copy = backup(tmp_path / "reg", tmp_path / "b.sqlite")
    reg.close()
    restore(copy, tmp_path / "reg", force=True)
    history = Registry(tmp_path / "reg").budget_history("d")
    assert [c.kind for c in history] == [ChangeKind.TOTAL, ChangeKind.RESTORE]
    assert history[1].to_json()["spent_before"] == [1.0, 0.0]


def test_a_backup_from_before_v4_is_migrated_and_the_restore_recorded(tmp_path, table):
    reg = _registry(tmp_path, table)
    copy = backup(tmp_path / "reg", tmp_path / "b.sqlite")
    as_v3_registry(copy)  # the backup as a v3 registry wrote it
    _release(reg)
    reg.close()
    restore(copy, tmp_path / "reg", force=True, allow_spend_decrease=True)
    again = Registry(tmp_path / "reg")
    (entry,) = _restores(again)
    assert entry.spent_before == (1.0, 0.0) and entry.spent_after == (0.0, 0.0)
    assert again.dataset("d").schemas == {}  # nothing invented for the old dataset
