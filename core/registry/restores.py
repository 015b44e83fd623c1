"""Restores leave a trace (issue 27 item 5): restoring a backup replaces every dataset's spent
(ε, δ) by the backup's, which can give budget back. Each restore writes, into the restored
registry and per dataset, a `BudgetChange` of kind RESTORE: when, the backup's file name and
SHA-256, and the totals and spend of the registry replaced (before) and of the backup (after).
The entries are written into a staged copy of the backup before it replaces the registry, so
the restored content and its record arrive together (one SQLite backup-API copy).

`dpx dataset restore` refuses, without an explicit flag, a restore that lowers a live dataset's
spend (`spend_returned`), naming each such dataset and how much it would get back.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from core.registry.models import BudgetChange, ChangeKind

EPSILON_SLACK = 1e-9  # float slack of sums of ε (as the registry's budget check)
DELTA_SLACK = 1e-15


@dataclass(frozen=True)
class Account:
    """A dataset's totals and spend, as one registry file holds them."""

    epsilon_total: float
    delta_total: float
    epsilon_spent: float
    delta_spent: float


@dataclass(frozen=True)
class Restored:
    """What `core.registry.store.restore` did: the registry file written, the backup's
    SHA-256, the budget-history entries it recorded (one per dataset of either side) and
    where a registry that could not be read was moved aside (None when it was read)."""

    path: Path
    backup_sha256: str
    changes: tuple[BudgetChange, ...]
    moved_aside: Path | None = None


def accounts(con: sqlite3.Connection) -> dict[str, Account]:
    """{dataset: its account} of a registry of any schema version (v1 tables only)."""
    rows = con.execute(
        "SELECT d.name, d.epsilon_total, d.delta_total, "
        "coalesce((SELECT sum(epsilon) FROM releases r WHERE r.dataset = d.name "
        "AND r.kind = 'release'), 0), "
        "coalesce((SELECT sum(delta) FROM releases r WHERE r.dataset = d.name "
        "AND r.kind = 'release'), 0) FROM datasets d ORDER BY d.name"
    ).fetchall()
    return {name: Account(float(e), float(d), float(se), float(sd)) for name, e, d, se, sd in rows}


def entries(
    before: dict[str, Account] | None,
    after: dict[str, Account],
    backup: str,
    sha256: str,
    time: str,
    note: str = "",
) -> list[BudgetChange]:
    """One RESTORE entry per dataset of the replaced registry (`before`; None: unreadable)
    or of the backup (`after`), not yet stored (id 0)."""
    names = sorted(set(before or {}) | set(after))
    out = []
    for name in names:
        old = (before or {}).get(name)
        new = after.get(name)
        out.append(
            BudgetChange(
                0,
                time,
                name,
                old.epsilon_total if old else 0.0,
                new.epsilon_total if new else 0.0,
                old.delta_total if old else 0.0,
                new.delta_total if new else 0.0,
                ChangeKind.RESTORE,
                backup,
                sha256,
                (old.epsilon_spent, old.delta_spent) if old else None,
                (new.epsilon_spent, new.delta_spent) if new else None,
                note if new else f"{note}; not in the backup".lstrip("; "),
            )
        )
    return out


def giving_back(changes: list[BudgetChange]) -> list[BudgetChange]:
    """The entries whose restore lowers the dataset's spend (budget given back)."""
    return [
        c
        for c in changes
        if c.spend_returned[0] > EPSILON_SLACK or c.spend_returned[1] > DELTA_SLACK
    ]


def refusal(changes: list[BudgetChange], backup: str, flag: str) -> str:
    """The one-line refusal of a restore that gives budget back without `flag`."""
    parts = []
    for c in changes:
        eps, delta = c.spend_returned
        after = c.spent_after or (0.0, 0.0)
        gone = "" if c.spent_after is not None else ", absent from the backup"
        parts.append(
            f"'{c.dataset}' gets epsilon {eps:g}, delta {delta:g} back (spent epsilon "
            f"{c.spent_before[0]:g} -> {after[0]:g}{gone})"
        )
    return (
        f"restoring {backup} would lower the spent budget of {len(changes)} dataset(s): "
        f"{'; '.join(parts)}. Nothing was changed. Fix: restore a newer backup, or add {flag} "
        "if that is intended (each dataset's budget history records it)."
    )


_COLUMNS = (
    "time, dataset, backup, backup_sha256, epsilon_total_before, epsilon_total_after, "
    "delta_total_before, delta_total_after, epsilon_spent_before, delta_spent_before, "
    "epsilon_spent_after, delta_spent_after, note"
)


def _row(c: BudgetChange) -> tuple:
    before = c.spent_before or (None, None)
    after = c.spent_after or (None, None)
    return (
        c.time, c.dataset, c.backup, c.backup_sha256, c.epsilon_before, c.epsilon_after,
        c.delta_before, c.delta_after, *before, *after, c.note,
    )  # fmt: skip


def record(con: sqlite3.Connection, changes: list[BudgetChange]) -> None:
    """Store the RESTORE entries (one transaction)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        con.executemany(
            f"INSERT INTO restores({_COLUMNS}) VALUES ({', '.join('?' * 13)})",
            [_row(c) for c in changes],
        )
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def carry_over(old: sqlite3.Connection, new: sqlite3.Connection) -> None:
    """Copy into `new` the restore entries of the registry being replaced (`old`) that the
    backup lacks: an earlier restore's trace survives a later one."""
    has = old.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='restores'")
    if has.fetchone() is None:
        return
    kept = {tuple(r) for r in new.execute(f"SELECT {_COLUMNS} FROM restores")}
    rows = [tuple(r) for r in old.execute(f"SELECT {_COLUMNS} FROM restores ORDER BY id")]
    missing = [r for r in rows if r not in kept]
    if missing:
        new.execute("BEGIN IMMEDIATE")
        new.executemany(f"INSERT INTO restores({_COLUMNS}) VALUES ({', '.join('?' * 13)})", missing)
        new.execute("COMMIT")


def restore_history(con: sqlite3.Connection, dataset: str) -> list[BudgetChange]:
    """The RESTORE entries of `dataset`, oldest first."""
    rows = con.execute(
        f"SELECT id, {_COLUMNS} FROM restores WHERE dataset=? ORDER BY id", (dataset,)
    ).fetchall()
    out = []
    for i, time, name, backup, sha, e0, e1, d0, d1, se0, sd0, se1, sd1, note in rows:
        out.append(
            BudgetChange(
                i,
                time,
                name,
                e0,
                e1,
                d0,
                d1,
                ChangeKind.RESTORE,
                backup,
                sha,
                None if se0 is None else (se0, sd0),
                None if se1 is None else (se1, sd1),
                note,
            )  # fmt: skip
        )
    return out
