"""Neighbouring catalogues D and D' = D minus one privacy unit (the victim, uid 7).

The background population is 150 units in three departments with 1-3 orders each, ordinary
values and salaries <= 100. Each `Victim` variant stresses a different way one unit can stand
out: many rows (40 orders), a value far beyond any clamping bound (salary 150, amounts 1e6),
NULLs in every nullable column, a GROUP BY key value no one else has, and magnitudes near the
int64 / double limits. The victim's rows come first in every table, so row-order attributes
(`rowid`, positional joins) of *every* other row shift when it is removed.

Tables (private ones keyed by `uid`):
- Users(uid, dept, salary, age, joined DATE, name, code)   private, one row per unit
- Orders(uid, amount, qty, day, item, ts TIMESTAMP)        private, many rows per unit
- Depts(dept, floor)                                        public
- Pub(g, label)                                             public, 100 rows
- Seq(i)                                                    public, 400 rows
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import StrEnum

import numpy as np
import pandas as pd

from core.dpsql.catalog import Catalog

VICTIM_UID = 7
POPULATION = 150
DEPARTMENTS = ("HR", "IT", "Ops")


class Victim(StrEnum):
    """How the removed unit differs from everyone else."""

    HEAVY = "heavy"  # 40 orders, salary 150, amounts 1e6, unique dept 'Zeta' and item
    NULLS = "nulls"  # 40 orders, NULL in every nullable column
    HUGE = "huge"  # int64-edge quantities, 1e300 amounts, a far-future date


@dataclass(frozen=True)
class Neighbours:
    """D (with the victim) and D' (without), plus the victim's unique key values."""

    victim: Victim
    with_victim: Catalog
    without_victim: Catalog


def _population() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(20261123)
    uids = [u for u in range(1, POPULATION + 2) if u != VICTIM_UID][:POPULATION]
    users = pd.DataFrame(
        {
            "uid": uids,
            "dept": [DEPARTMENTS[i % 3] for i in range(POPULATION)],
            "salary": rng.integers(20, 101, POPULATION).astype(float),
            "age": rng.integers(20, 66, POPULATION),
            "joined": [
                date(2020, 1, 1) + timedelta(days=int(d)) for d in rng.integers(0, 900, POPULATION)
            ],
            "name": [f"user{u}" for u in uids],
            "code": [f"c{u % 5}" for u in uids],
        }
    )
    rows = []
    for i, u in enumerate(uids):
        for j in range(1 + i % 3):
            rows.append(
                {
                    "uid": u,
                    "amount": float(rng.integers(1, 100)),
                    "qty": int(rng.integers(1, 10)),
                    "day": int(1 + (i + j) % 28),
                    "item": ("pen", "ink", "pad")[(i + j) % 3],
                    "ts": datetime(2024, 1, 1) + timedelta(hours=int(rng.integers(0, 5000))),
                }
            )
    return users, pd.DataFrame(rows)


def _victim_rows(victim: Victim) -> tuple[pd.DataFrame, pd.DataFrame]:
    n = 40
    if victim == Victim.HEAVY:
        user = {
            "dept": "Zeta",
            "salary": 150.0,
            "age": 99,
            "joined": date(2019, 5, 5),
            "name": "victim",
            "code": "zz",
        }
        order = {
            "amount": 1e6,
            "qty": 1000,
            "day": 31,
            "item": "unicorn",
            "ts": datetime(2030, 1, 1),
        }
    elif victim == Victim.NULLS:
        user = {
            "dept": None,
            "salary": None,
            "age": None,
            "joined": None,
            "name": None,
            "code": None,
        }
        order = {"amount": None, "qty": None, "day": None, "item": None, "ts": None}
    else:
        user = {
            "dept": "Zeta",
            "salary": 1e300,
            "age": 2**62,
            "joined": date(9999, 12, 31),
            "name": "x" * 5000,
            "code": "%_\\",
        }
        order = {
            "amount": -1e300,
            "qty": 2**62,
            "day": -(2**62),
            "item": "[(*",
            "ts": datetime(9999, 12, 31),
        }
    users = pd.DataFrame([{"uid": VICTIM_UID, **user}])
    orders = pd.DataFrame([{"uid": VICTIM_UID, **order} for _ in range(n)])
    if victim != Victim.NULLS:  # distinct amounts: a relabelled "unit" column sees 40 units
        orders["amount"] = orders["amount"] + np.sign(orders["amount"]) * np.arange(n) * 1e-3 * abs(
            orders["amount"]
        )
    return users, orders


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Fixed column types whatever the victim's values (NULLs must not change a type)."""
    out = frame.copy()
    for col in ("uid", "age", "qty", "day"):
        if col in out:
            out[col] = pd.array([None if pd.isna(v) else int(v) for v in out[col]], dtype="Int64")
    for col in ("salary", "amount"):
        if col in out:
            out[col] = out[col].astype("float64")
    for col in ("dept", "name", "code", "item"):
        if col in out:
            out[col] = out[col].astype(object)
    if "ts" in out:
        out["ts"] = pd.to_datetime(out["ts"], errors="coerce").astype("datetime64[us]")
    if "joined" in out:
        out["joined"] = [None if v is None or pd.isna(v) else v for v in out["joined"]]
    return out


def _catalog(users: pd.DataFrame, orders: pd.DataFrame, orders_unit: str = "uid") -> Catalog:
    cat = Catalog()
    cat.add_private("Users", _typed(users), "uid")
    cat.add_private("Orders", _typed(orders), orders_unit)
    cat.add_public(
        "Depts", pd.DataFrame({"dept": ["HR", "IT", "Ops", "Zeta"], "floor": [1, 2, 3, 4]})
    )
    cat.add_public(
        "Pub", pd.DataFrame({"g": np.arange(100), "label": [f"p{i % 7}" for i in range(100)]})
    )
    cat.add_public("Seq", pd.DataFrame({"i": np.arange(400)}))  # issue 19's amplifier
    return cat


def neighbours(victim: Victim, orders_unit: str = "uid") -> Neighbours:
    """D has the victim's rows first in every private table; D' is D without them.

    `orders_unit` declares another column of Orders as its unit: the catalogue then no longer
    knows who a row belongs to (a positive control: the oracle must flag every release)."""
    users, orders = _population()
    v_users, v_orders = _victim_rows(victim)
    with_v = _catalog(
        pd.concat([v_users, users], ignore_index=True),
        pd.concat([v_orders, orders], ignore_index=True),
        orders_unit,
    )
    return Neighbours(victim, with_v, _catalog(users, orders, orders_unit))
