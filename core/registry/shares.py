"""Per-analyst shares of a dataset's budget (issue 33): the owner gives a named analyst a share
(ε, δ) of a dataset's budget (`set_share`, recorded in `share_changes`); every release an
analyst makes is charged to the dataset and to the analyst's share in the *same* write
transaction (`Registry.charge` calls `_share_refusal` under its lock), so concurrent processes
can never overspend a share, and a process killed mid-charge leaves the release row whole or
absent (a share's spend is read off the release rows, never kept as a separate counter that
could tear).

A share composes basically: an analyst's spend is (Σε, Σδ) of the releases charged to them
(exact, whatever the dataset's accounting); the dataset's own check still applies to every
release. Once a dataset has any share, a release by an analyst without one is refused.
A mixin of `core.registry.registry.Registry`.
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass

from core.errors import InputError
from core.privacy.cost import Cost, check_budget
from core.registry.models import RunKind
from core.registry.store import now

_ANALYST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$")
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Share:
    """An analyst's share of a dataset's budget and what the analyst has spent of it."""

    dataset: str
    analyst: str
    epsilon: float
    delta: float
    epsilon_spent: float = 0.0
    delta_spent: float = 0.0

    def to_json(self) -> dict:
        return {
            "analyst": self.analyst,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "epsilon_spent": self.epsilon_spent,
            "delta_spent": self.delta_spent,
            "epsilon_remaining": max(0.0, self.epsilon - self.epsilon_spent),
            "delta_remaining": max(0.0, self.delta - self.delta_spent),
        }


def check_analyst(analyst: str) -> str:
    """A declared analyst identity: letters, digits, '_', '.', '@', '-' (at most 128)."""
    if not _ANALYST.match(analyst or ""):
        raise InputError(
            f"analyst '{analyst}' is not a valid identity. Fix: letters, digits, '_', '.', "
            "'@', '-' (at most 128, starting with a letter or digit)."
        )
    return analyst


class ShareStore:
    """Uses the registry's `dataset`, `_write`, `_read`."""

    def set_share(self, name: str, analyst: str, epsilon: float, delta: float = 0.0) -> Share:
        """The owner's share for `analyst` on dataset `name`, recorded. A share below what
        the analyst has already spent is refused (there is no reset), as is one above the
        dataset's total."""
        check_analyst(analyst)
        d = self.dataset(name)
        if not (math.isfinite(epsilon) and epsilon >= 0 and 0 <= delta < 1):
            raise InputError("a share needs epsilon >= 0 and delta in [0, 1).")
        if epsilon > d.policy.epsilon_total + _TOLERANCE or delta > d.policy.delta_total:
            raise InputError(
                f"a share of epsilon {epsilon:g}, delta {delta:g} is above dataset '{name}''s "
                f"total (epsilon {d.policy.epsilon_total:g}, delta {d.policy.delta_total:g}). "
                f"Fix: lower it, or raise the total with `dpx dataset budget {name}`."
            )
        with self._write() as con:
            spent_e, spent_d = _analyst_spent(con, name, analyst)
            if epsilon < spent_e - _TOLERANCE or delta < spent_d - 1e-15:
                raise InputError(
                    f"analyst '{analyst}' has already spent epsilon {spent_e:g}, delta "
                    f"{spent_d:g} of dataset '{name}'; a share below that is refused (there is "
                    "no reset)."
                )
            before = con.execute(
                "SELECT epsilon, delta FROM analyst_shares WHERE dataset=? AND analyst=?",
                (name, analyst),
            ).fetchone()
            con.execute(
                "INSERT INTO analyst_shares(dataset, analyst, epsilon, delta) VALUES (?,?,?,?) "
                "ON CONFLICT(dataset, analyst) DO UPDATE SET epsilon=excluded.epsilon, "
                "delta=excluded.delta",
                (name, analyst, float(epsilon), float(delta)),
            )
            eps_before, delta_before = before if before is not None else (None, None)
            con.execute(
                "INSERT INTO share_changes(time, dataset, analyst, epsilon_before, "
                "epsilon_after, delta_before, delta_after) VALUES (?,?,?,?,?,?,?)",
                (now(), name, analyst, eps_before, epsilon, delta_before, delta),
            )
        return Share(name, analyst, float(epsilon), float(delta), spent_e, spent_d)

    def shares(self, name: str) -> list[Share]:
        """Every analyst's share of dataset `name` with what they spent, by analyst."""
        self.dataset(name)
        rows = self._read(
            "SELECT analyst, epsilon, delta FROM analyst_shares WHERE dataset=? ORDER BY analyst",
            (name,),
        )
        out = []
        with self._guard():
            for analyst, eps, delta in rows:
                spent = _analyst_spent(self._con, name, analyst)
                out.append(Share(name, analyst, eps, delta, *spent))
        return out

    def share_history(self, name: str) -> list[dict]:
        rows = self._read(
            "SELECT time, analyst, epsilon_before, epsilon_after, delta_before, delta_after "
            "FROM share_changes WHERE dataset=? ORDER BY id",
            (name,),
        )
        keys = ("time", "analyst", "epsilon_before", "epsilon_after", "delta_before", "delta_after")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def has_shares(self, name: str) -> bool:
        rows = self._read("SELECT 1 FROM analyst_shares WHERE dataset=? LIMIT 1", (name,))
        return bool(rows)

    @staticmethod
    def _share_refusal(
        con: sqlite3.Connection, dataset: str, analyst: str | None, epsilon: float, delta: float
    ) -> str | None:
        """Why a release of (ε, δ) by `analyst` does not fit their share, or None. Runs inside
        the charge's write transaction. A dataset without shares limits no analyst."""
        if analyst is None:
            return None
        row = con.execute(
            "SELECT epsilon, delta FROM analyst_shares WHERE dataset=? AND analyst=?",
            (dataset, analyst),
        ).fetchone()
        if row is None:
            if con.execute(
                "SELECT 1 FROM analyst_shares WHERE dataset=? LIMIT 1", (dataset,)
            ).fetchone():
                return (
                    f"analyst '{analyst}' has no share of dataset '{dataset}'. Nothing was "
                    f"charged. Fix: ask the owner for one (`dpx dataset share {dataset} "
                    f"--analyst {analyst} --epsilon E`)."
                )
            return None
        short = check_budget(
            Cost(epsilon, delta),
            spent=Cost(*_analyst_spent(con, dataset, analyst)),
            total=Cost(row[0], row[1]),
            subject=f"analyst '{analyst}''s share of dataset '{dataset}'",
            owner_command=f"dpx dataset share {dataset} --analyst {analyst}",
        )
        return None if short is None else str(short)


def _analyst_spent(con: sqlite3.Connection, dataset: str, analyst: str) -> tuple[float, float]:
    """(Σε, Σδ) of the releases charged to `analyst` on `dataset`."""
    row = con.execute(
        "SELECT coalesce(sum(epsilon), 0), coalesce(sum(delta), 0) FROM releases "
        "WHERE dataset=? AND kind=? AND analyst=?",
        (dataset, RunKind.RELEASE.value, analyst),
    ).fetchone()
    return float(row[0]), float(row[1])
