"""An attacker's test of DAWA's partition step as published: is it eps1-DP? Prints JSON.

The attacker picks two neighbouring count vectors (one point added), runs the partition step
many times on each and compares how often each partition comes out: an eps1-DP step keeps every
log-ratio of frequencies within eps1 (up to sampling error, reported as a standard error).

Mechanisms compared on a 4-cell and an 8-cell domain (aligned dyadic runs), eps1 = 1, eps2 = 3:

* `paper`: noisy costs as the paper / ektelo's cutil (scale 2(1 - 1/|b|)/eps1, none on single
  cells), floored at 1/eps2, exact minimum;
* `paper+noisy singles`: the same with noise on single cells too;
* `ours`: core/spatial/baselines/dawa.py's PrivTree-style split rule (for contrast);
* with `--ektelo PYTHON` (a venv where ektelo's cutil is built; see docs/benchmarks/htf.md):
  ektelo's own `L1partition_approx` (any-start power-of-two intervals) on the 4-cell pair.

Usage: .venv/bin/python bench/peers_dawa_privacy.py [--runs 200000] [--ektelo /tmp/.../python --ektelo-home DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.peers_dawa_paper import min_partition, noisy_costs  # noqa: E402
from core.privacy import Accountant, Laplace, Noise  # noqa: E402
from core.spatial.baselines.dawa import privtree_constants, run_stats, split_runs  # noqa: E402

EPS1, EPS2 = 1.0, 3.0
PAIRS = {
    "4 cells": ([0, 0, 0, 0], [1, 0, 0, 0]),
    "8 cells": ([0] * 8, [1] + [0] * 7),
}


def _levels(x):
    x = np.asarray(x, float)
    cells, devs, length = [], [], 1
    while length <= len(x):
        X = x.reshape(-1, length)
        cells.append(np.full(len(X), length))
        devs.append(np.abs(X - X.mean(1, keepdims=True)).sum(1))
        length *= 2
    return cells, devs


def paper_counts(x, runs, singles_noisy, seed):
    cells, devs = _levels(x)
    rng = np.random.default_rng(seed)
    out = Counter()
    for _ in range(runs):
        s, lv = min_partition(cells, noisy_costs(cells, devs, EPS1, EPS2, rng, singles_noisy))
        out[tuple(zip(s.tolist(), lv.tolist(), strict=True))] += 1
    return out


def ours_counts(x, runs, seed):
    x = np.asarray(x, np.int64)
    st = run_stats(x, np.ones(len(x), bool))
    sens, _, delta = privtree_constants(EPS1, 1)
    mech = Laplace("partition", sensitivity=sens, epsilon=EPS1)
    out = Counter()
    for r in range(runs):
        s, lv = split_runs(st, 1 / EPS2, delta, mech, Accountant(Noise.seeded(seed * 10**7 + r)))
        out[tuple(zip(s.tolist(), lv.tolist(), strict=True))] += 1
    return out


def ektelo_counts(python: str, home: str, x, runs: int) -> Counter:
    """ektelo's cutil.L1partition_approx with epsilon 4 and ratio 0.25 (eps1 = 1, eps2 = 3)."""
    code = textwrap.dedent(
        """
        import json, sys
        from collections import Counter
        import numpy as np
        from ektelo.algorithm.dawa.cutils import cutil
        x = np.array(json.loads(sys.argv[1]), dtype="int32")
        out = Counter()
        for seed in range(int(sys.argv[2])):
            hist = cutil.L1partition_approx(len(x) + 1, x, 4.0, 0.25, seed)
            bounds = []
            for lb in hist[1:]:  # left bounds, right to left, until 0 (ektelo's read-out)
                bounds.append(int(lb))
                if lb == 0:
                    break
            out[" ".join(map(str, bounds))] += 1
        print(json.dumps(out))
        """
    )
    res = subprocess.run([python, "-c", code, json.dumps(list(x)), str(runs)],
                         capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": home})  # fmt: skip
    return Counter(json.loads(res.stdout))


def worst_ratio(p: Counter, q: Counter, runs: int, floor: int = 500) -> dict:
    """Largest |log((P+1)/(Q+1))| over outputs seen >= floor times on either side, with its
    standard error (delta method) and the two frequencies."""
    best = {"log_ratio": 0.0}
    for key in set(p) | set(q):
        if max(p[key], q[key]) < floor:
            continue
        r = abs(math.log((p[key] + 1) / (q[key] + 1)))
        if r > best["log_ratio"]:
            se = math.sqrt(1 / (p[key] + 1) + 1 / (q[key] + 1))
            best = {"log_ratio": round(r, 3), "std_error": round(se, 3),
                    "freq": [p[key] / runs, q[key] / runs]}  # fmt: skip
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200_000)
    ap.add_argument("--ektelo", default=None, help="python of a venv with ektelo's cutil built")
    ap.add_argument("--ektelo-home", default="/tmp/peers_ektelo", help="ektelo's source tree")
    args = ap.parse_args()
    out = {"eps1": EPS1, "eps2": EPS2, "runs": args.runs, "results": []}
    for name, (x, y) in PAIRS.items():
        for mech, fn in [
            ("paper", lambda v, s: paper_counts(v, args.runs, False, s)),
            ("paper+noisy singles", lambda v, s: paper_counts(v, args.runs, True, s)),
            ("ours", lambda v, s: ours_counts(v, min(args.runs, 50_000), s)),
        ]:
            runs = min(args.runs, 50_000) if mech == "ours" else args.runs
            res = worst_ratio(fn(x, 1), fn(y, 2), runs)
            out["results"].append({"domain": name, "mechanism": mech, "x": x, "x_prime": y, **res})
            print(name, mech, res, file=sys.stderr)
    if args.ektelo:
        x, y = PAIRS["4 cells"]
        res = worst_ratio(ektelo_counts(args.ektelo, args.ektelo_home, x, args.runs),
                          ektelo_counts(args.ektelo, args.ektelo_home, y, args.runs),
                          args.runs)  # fmt: skip
        out["results"].append({"domain": "4 cells", "mechanism": "ektelo cutil.L1partition_approx",
                               "x": x, "x_prime": y, **res})  # fmt: skip
        print("ektelo", res, file=sys.stderr)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
