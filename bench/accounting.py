"""Tight composition of everything a dataset has released (issue 33); prints one JSON object.

Three measurements:

1. `dpsql_count_sum`: the mechanism objects the DP SQL planner builds (`core.dpsql.service.
   prepare`, reads no data) for a typical query — `COUNT(*)` and `SUM(amount)` per group, ε
   0.1, δ 1e-7 per release: a noisy-threshold partition selection (ε/3, δ) and two discrete
   Laplace aggregates (ε/3 each) — repeated 100 times, composed under `basic` and `pld`
   (`core.privacy.accounting.composition`) at a dataset total δ D (basic's (Σε, Σδ) holds at
   every D >= Σδ = 1e-5, so both are compared at the same D).
2. `laplace`: 100 Laplace releases of ε 0.1 (scale 10, sensitivity 1) at D = 1e-6, beside the
   Kairouz-Oh-Viswanath closed-form bound (Thm 3.5, ~5.8) and the exact optimum (Thm 3.3).
3. `registry`: a registered `pld` dataset of budget (5, 1e-6) charged releases of one Laplace
   ε 0.1 each through `Registry.charge` until refused, beside a `basic` dataset of the same
   budget; the charge's time (composition inside the write transaction) per release.

Usage: .venv/bin/python bench/accounting.py [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.dpsql.catalog import Catalog  # noqa: E402
from core.dpsql.service import prepare  # noqa: E402
from core.errors import BudgetExceededError  # noqa: E402
from core.privacy import Laplace, Noise  # noqa: E402
from core.privacy.accounting import VALUE_DISCRETIZATION, Accounting, composition  # noqa: E402
from core.registry import Policy, Registry  # noqa: E402

QUERY = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 0.1, delta = 1e-7, "
    "max_groups_contributed = 1, privacy_unit_column = uid) day, "
    "COUNT(*, contribution_bounds_per_group => (0, 5)) AS n, "
    "SUM(amount, contribution_bounds_per_group => (0, 100)) AS total "
    "FROM Orders GROUP BY day"
)
RELEASES = 100


def kov_exact(k: int, eps: float, delta: float) -> float:
    """Exact optimal ε of k-fold ε-DP composition at δ (Kairouz, Oh, Viswanath 2015, Thm 3.3)."""
    p = math.exp(eps) / (1 + math.exp(eps))

    def delta_at(t: float) -> float:
        return sum(
            math.comb(k, i) * p ** (k - i) * (1 - p) ** i * (1 - math.exp(t - (k - 2 * i) * eps))
            for i in range(k + 1)
            if (k - 2 * i) * eps > t
        )

    lo, hi = 0.0, k * eps
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if delta_at(mid) <= delta else (mid, hi)
    return hi


def kov_bound(k: int, eps: float, delta: float) -> float:
    """Kairouz, Oh, Viswanath 2015, Theorem 3.5 (closed form)."""
    head = (math.exp(eps) - 1) * eps * k / (math.exp(eps) + 1)
    return min(
        k * eps,
        head + eps * math.sqrt(2 * k * math.log(math.e + math.sqrt(k * eps**2) / delta)),
        head + eps * math.sqrt(2 * k * math.log(1 / delta)),
    )


def dpsql_mechanisms():
    orders = pd.DataFrame({"uid": [1, 1, 2, 3], "amount": [10.0, 20.0, 30.0, 5.0],
                           "day": [1, 2, 3, 4]})  # fmt: skip
    catalog = Catalog()
    catalog.add_private("Orders", orders, "uid")
    return prepare(QUERY, catalog, Noise.seeded(0)).mechanisms


def composed(mechanisms, delta_total: float) -> dict:
    t = time.perf_counter()
    pld = composition(mechanisms, delta_total, Accounting.PLD)
    seconds = time.perf_counter() - t
    basic = composition(mechanisms, delta_total, Accounting.BASIC)
    return {
        "delta_total": delta_total,
        "basic": {"epsilon": basic.epsilon, "delta": basic.delta},
        "pld": {"epsilon": pld.epsilon, "delta": pld.delta, "delta_claims": pld.delta_claims},
        "pld_over_basic": pld.epsilon / basic.epsilon,
        "compose_seconds": round(seconds, 4),
    }


def registry_run(directory: Path, table: Path) -> dict:
    reg = Registry(directory)
    out = {}
    for accounting in ("basic", "pld"):
        reg.add_dataset(accounting, [("t", table)], Policy(5.0, 1e-6), accounting=accounting)
        times = []
        while True:
            t = time.perf_counter()
            try:
                reg.charge("sql", accounting, {}, [Laplace("x", sensitivity=1.0, epsilon=0.1)],
                           "secure")  # fmt: skip
            except BudgetExceededError:
                break
            finally:
                times.append(time.perf_counter() - t)
        eps, delta = reg.spent(accounting)
        out[accounting] = {
            "releases_admitted": len(times) - 1,
            "spent": {"epsilon": eps, "delta": delta},
            "charge_ms_median": round(1000 * sorted(times)[len(times) // 2], 2),
            "charge_ms_max": round(1000 * max(times), 2),
        }
    reg.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    mechs = dpsql_mechanisms()
    per_release = [
        {"kind": m.kind.value, "epsilon": m.cost.epsilon, "delta": m.cost.delta,
         "sensitivity": m.sensitivity, "scale": m.scale, "loss": m.loss().kind.value}
        for m in mechs
    ]  # fmt: skip
    many = list(mechs) * RELEASES
    lap = [Laplace("sum", sensitivity=1.0, epsilon=0.1)] * RELEASES
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "t.csv"
        table.write_text("uid,x\n1,2\n")
        reg = registry_run(Path(tmp) / "reg", table)
    result = {
        "issue": 33,
        "python": platform.python_version(),
        "value_discretization": VALUE_DISCRETIZATION,
        "releases": RELEASES,
        "dpsql_count_sum": {
            "query": QUERY,
            "mechanisms_per_release": per_release,
            "at": [composed(many, d) for d in (1.1e-5, 2e-5, 1e-4)],
        },
        "laplace": {
            "mechanism": "Laplace, sensitivity 1, scale 10 (epsilon 0.1)",
            "at": composed(lap, 1e-6),
            "kov_theorem_3_5_bound": kov_bound(RELEASES, 0.1, 1e-6),
            "kov_exact_optimum": kov_exact(RELEASES, 0.1, 1e-6),
        },
        "registry": reg,
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
