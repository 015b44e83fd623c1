"""Gaussian against Laplace noise for DP SQL counts and sums (issue 33); prints one JSON object.

For a query whose unit may touch C_u groups — `COUNT(*)` bounded to (0, 1) and `SUM(x)` bounded
to (0, 10) per group, at one (ε, δ) — the planner (`core.dpsql.service.prepare`, reads no data)
builds the mechanisms under `noise = 'laplace'` and `noise = 'gaussian'`; the public 95 %
half-widths of the released COUNT and SUM (each mechanism's own quantile: discrete Laplace, or
discrete Gaussian) are compared at the same (ε, δ), for C_u in 1, 3, 10, 30, 100. Then, for
C_u = 10 with a fixed seed, 2000 seeded draws per mechanism check that the stated half-width
covers about 95 % of the noise (`empirical_coverage`). Last, 100 such Gaussian releases
composed under `pld` (zCDP for the Gaussians, `core.privacy.accounting`) against 100 Laplace
releases, at a dataset total δ of 1e-3 (the Laplace thresholds alone claim Σδ = 1e-4).

Usage: .venv/bin/python bench/gaussian_interval.py [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.dpsql.catalog import Catalog  # noqa: E402
from core.dpsql.service import explain, prepare  # noqa: E402
from core.privacy import Accountant, Noise  # noqa: E402
from core.privacy.accounting import composition  # noqa: E402

EPSILON, DELTA = 1.0, 1e-6
SEED = 20261128


def query(noise: str, cu: int) -> str:
    return (
        f"SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = {EPSILON}, delta = {DELTA}, "
        f"max_groups_contributed = {cu}, privacy_unit_column = uid, noise = '{noise}') g, "
        "COUNT(*, contribution_bounds_per_group => (0, 1)) AS c, "
        "SUM(x, contribution_bounds_per_group => (0, 10)) AS s FROM t GROUP BY g"
    )


def catalog() -> Catalog:
    cat = Catalog()
    cat.add_private("t", pd.DataFrame({"uid": [1], "g": ["a"], "x": [1.0]}), "uid")
    return cat


def coverage(prepared, draws: int = 2000) -> dict:
    """Share of seeded noise draws within each count/sum mechanism's stated half-width."""
    out = {}
    for s in prepared.plan.statistics:
        m = s.mechanism
        acc = Accountant(Noise.seeded(SEED), budget=None)
        noise = m.draw(acc, np.zeros(draws, dtype=np.int64))
        out[s.component.value] = float(np.mean(np.abs(noise) <= m.half_width(0.95)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    cat = catalog()
    rows = []
    prepared = {}
    for cu in (1, 3, 10, 30, 100):
        row = {"max_groups_contributed": cu}
        for noise in ("laplace", "gaussian"):
            p = prepare(query(noise, cu), cat, Noise.seeded(SEED))
            prepared[noise, cu] = p
            widths = explain(p)["half_widths_95"]
            row[noise] = {
                "count_half_width_95": widths["c"],
                "sum_half_width_95": widths["s"],
                "cost": [p.cost.epsilon, p.cost.delta],
                "mechanisms": [
                    f"{m.kind.value} ε {m.cost.epsilon:.4g} δ {m.cost.delta:g}"
                    for m in p.mechanisms
                ],  # fmt: skip
            }
        row["gaussian_over_laplace_count"] = (
            row["gaussian"]["count_half_width_95"] / row["laplace"]["count_half_width_95"]
        )
        row["gaussian_over_laplace_sum"] = (
            row["gaussian"]["sum_half_width_95"] / row["laplace"]["sum_half_width_95"]
        )
        rows.append(row)
    cu10 = next(r for r in rows if r["max_groups_contributed"] == 10)
    composed = {}
    for noise in ("laplace", "gaussian"):
        mechs = list(prepared[noise, 10].mechanisms) * 100
        c = composition(mechs, 1e-3, "pld")
        composed[noise] = {"epsilon": c.epsilon, "delta": c.delta, "method": c.method,
                           "basic_epsilon": c.basic.epsilon}  # fmt: skip
    out = {
        "benchmark": "gaussian_interval",
        "epsilon": EPSILON,
        "delta": DELTA,
        "seed": SEED,
        "calibration": "zCDP -> (epsilon, delta) by CKS 2020 Cor. 13, checked with OpenDP's map",
        "rows": rows,
        "cu10_gaussian_narrower": (
            cu10["gaussian"]["count_half_width_95"] < cu10["laplace"]["count_half_width_95"]
            and cu10["gaussian"]["sum_half_width_95"] < cu10["laplace"]["sum_half_width_95"]
        ),
        "empirical_coverage_cu10": {
            noise: coverage(prepared[noise, 10]) for noise in ("laplace", "gaussian")
        },
        "composed_100_releases_cu10_pld_total_delta_1e-3": composed,
        "python": platform.python_version(),
    }
    text = json.dumps(out, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
