"""Regret of the private method choice (`auto`) with enough repetitions; prints one JSON object.

Issue 10's benchmark grid (bench/htf_datasets.py point sets x epsilon), but every repetition is
kept, so auto's regret (auto's mean MRE / the best method's mean MRE over the same repetitions
and the same queries) comes with a bootstrap interval.

Phases (run one each, then `replay` or bench/peers_regret_table.py):

  --phase methods   every method at full epsilon, per repetition;
  --phase auto      the real `auto` (core/spatial/selection.py's current rules) only, on the
                    same query sets, for the final regret.

Methods runs made before round 3 (issue 20, docs/benchmarks/htf.md) also stored each candidate
at round 2's build budget ("<method>@build", 0.94 x epsilon) and the features round 2 measured;
round 3's two-stage shares (noisy N, then coarse counts only at enough signal) make the build
budget depend on the noisy N, so the offline simulation of rules went away: a rule change is
measured by `--phase auto`, which is cheap (seconds to a minute per set).

Seeds: SeedSequence([seed, rep, crc32(role)]) like core/spatial/evaluate.py; queries per
(seed, rep, size) are shared by every method of a repetition (paired comparison). `auto` draws
from the role "auto" unless `--auto-role` names another (round 6 runs: `--auto-role ug`, common
random numbers with UG: below 330 points per unit of noise Recommended is UG alone, and then
its MRE equals UG's in every repetition).

Usage: DPX_REGISTRY=$(mktemp -d) .venv/bin/python bench/htf_regret.py --reps 5 --phase methods
       [--eps 0.1,1.0] [--queries 600] [--seed 2027] [--datasets a,b] > methods.json
       .venv/bin/python bench/htf_regret.py --reps 5 --phase auto > auto.json
       .venv/bin/python bench/htf_regret.py replay methods.json auto.json   # regrets
       issue 20: --sets design (point_sets + holdout_sets) | heldout | heldout2 | heldout3 | heldout4 | heldout5;
       tables: bench/peers_regret_table.py methods.json auto.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DPX_REGISTRY", tempfile.mkdtemp(prefix="dpx-bench-"))

from core.privacy import Accountant, Cost  # noqa: E402
from core.spatial.evaluate import stream  # noqa: E402
from core.spatial.methods import get_method  # noqa: E402
from core.spatial.queries import (  # noqa: E402
    DEFAULT_SIZES,
    answer,
    prefix_sums,
    random_queries,
    relative_errors,
)
from core.spatial.selection import N_SELECTION_SHARE  # noqa: E402

# htf / htf+ are left out: in the 3-repetition grid (htf_selection_grid.json) the better of them
# is 1.56x to 116x behind the best method in every cell, so they cannot be "best in hindsight";
# --methods adds them back.
METHODS = ["ug", "ag", "privtree", "dawa", "hb", "quadtree", "quadtree-leaves"]
CANDIDATES = ["ug", "ag", "privtree", "dawa"]  # what a rule may pick (issue 20: + DAWA)


def overall_mre(rel, P_true_q, Qs, ny, nx) -> float:
    P = prefix_sums(rel.density_raster(ny, nx))
    errs = [relative_errors(answer(P, Qs[f]), P_true_q[f], 20.0) for f in DEFAULT_SIZES]
    return float(np.concatenate(errs).mean())


def run_cell(F: np.ndarray, eps: float, args) -> dict:
    ny, nx = F.shape
    S = prefix_sums(F.astype(np.int64))
    per_rep: dict[str, list[float]] = {}
    feats: list[dict] = []
    for rep in range(args.reps):
        Qs = {
            f: random_queries(ny, nx, f, args.queries, stream(args.seed, rep, f"queries:{f}"))
            for f in DEFAULT_SIZES
        }
        truth = {f: answer(S, Q) for f, Q in Qs.items()}

        def score(name, method, e, role, rep=rep, truth=truth, Qs=Qs):
            rel = get_method(method)(F, e, Accountant(stream(args.seed, rep, role), Cost(e)))
            per_rep.setdefault(name, []).append(overall_mre(rel, truth, Qs, ny, nx))
            return rel

        if args.phase == "methods":
            for m in args.methods.split(","):
                score(m, m, eps, m)
        else:
            rel = score("auto", "auto", eps, args.auto_role)
            sel = rel.info["selection"]
            feats.append({**vars(sel.features), "pick": sel.method, "rule": sel.rule,
                          "epsilon_selection": sel.epsilon})  # fmt: skip
    return {"per_rep": per_rep, "features": feats}


def _boot_ratio(num: np.ndarray, den: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """Ratio of means and its 90 % bootstrap interval over repetitions (paired resampling)."""
    idx = rng.integers(0, len(num), size=(2000, len(num)))
    r = num[idx].mean(axis=1) / den[idx].mean(axis=1)
    return float(np.quantile(r, 0.05)), float(np.quantile(r, 0.95))


def replay(methods_json: dict, auto_json: dict) -> dict:
    """Per cell: the best method in hindsight at full epsilon, the real auto's picks, its regret
    with a 90 % bootstrap interval (paired over repetitions) and auto / UG."""
    rng = np.random.default_rng(0)
    auto_cells = {(c["dataset"], c["epsilon"]): c for c in auto_json["cells"]}
    rows = []
    for c in methods_json["cells"]:
        pr = {k: np.asarray(v) for k, v in c["per_rep"].items() if "@" not in k}
        best = min(pr, key=lambda k: pr[k].mean())
        a = auto_cells[(c["dataset"], c["epsilon"])]
        real = np.asarray(a["per_rep"]["auto"])
        rows.append({
            "dataset": c["dataset"], "kind": c["kind"], "n": c["n"], "epsilon": c["epsilon"],
            "mre": {k: float(v.mean()) for k, v in pr.items()}, "best": best,
            "auto_picks": [f["pick"] for f in a["features"]],
            "regret": float(real.mean() / pr[best].mean()),
            "regret_ci90": _boot_ratio(real, pr[best], rng),
            "auto_vs_ug": float(real.mean() / pr["ug"].mean()),
        })  # fmt: skip
    return {"cells": rows}


def main() -> None:
    from bench.htf_datasets import (
        heldout2_sets,
        heldout3_sets,
        heldout4_sets,
        heldout_sets,
        holdout_sets,
        point_sets,
    )

    if len(sys.argv) > 1 and sys.argv[1] == "replay":
        methods_json = json.loads(Path(sys.argv[2]).read_text())
        auto_json = json.loads(Path(sys.argv[3]).read_text())
        print(json.dumps(replay(methods_json, auto_json)))
        return

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phase", choices=["methods", "auto"], default="methods")
    ap.add_argument("--reps", type=int, default=12)
    ap.add_argument("--eps", default="0.1,0.5,1.0")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2027)
    ap.add_argument("--datasets", default=None)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--holdout", action="store_true", help="issue 10's held-out point sets")
    ap.add_argument(
        "--auto-role",
        default="auto",
        help="the noise stream `auto` draws from (issue 20, round 6: 'ug', UG's stream, so the "
        "comparison with UG is paired: where Recommended builds UG alone it draws exactly UG's "
        "noise; against any other method the streams stay independent)",
    )
    ap.add_argument(
        "--sets",
        choices=["design", "heldout", "heldout2", "heldout3", "heldout4", "heldout5"],
        default=None,
        help="issue 20: design = point_sets + issue 10's holdout_sets; heldout = the "
        "new sets the choice never saw (bench/htf_datasets.heldout_sets)",
    )
    args = ap.parse_args()
    epss = [float(v) for v in args.eps.split(",")]
    only = set(args.datasets.split(",")) if args.datasets else None
    cells, t0 = [], time.perf_counter()
    if args.sets == "design":
        sets = [*point_sets(), *holdout_sets()]
    elif args.sets == "heldout":
        sets = heldout_sets()
    elif args.sets == "heldout2":
        sets = heldout2_sets()
    elif args.sets == "heldout3":
        sets = heldout3_sets()
    elif args.sets == "heldout4":
        sets = heldout4_sets()
    elif args.sets == "heldout5":
        from bench.htf_heldout5 import heldout5_sets

        sets = heldout5_sets()
    else:
        sets = holdout_sets() if args.holdout else point_sets()
    for ps in sets:
        if only and ps.name not in only:
            continue
        F = ps.load()
        for eps in epss:
            c = run_cell(F, eps, args)
            cells.append({"dataset": ps.name, "kind": ps.kind, "n": int(F.sum()), "epsilon": eps,
                          **c})  # fmt: skip
            print(f"{ps.name} eps={eps} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    out = {
        "protocol": {
            "phase": args.phase,
            "grid": 1024,
            "epsilons": epss,
            "reps": args.reps,
            "seed": args.seed,
            "auto_noise_stream": args.auto_role,
            "queries_per_size": args.queries,
            "query_sizes": list(DEFAULT_SIZES),
            "smoothing": 20,
            "methods": args.methods.split(","),
            "candidates": CANDIDATES,
            "selection_shares": {"n": N_SELECTION_SHARE},  # round 7 (issue 31): N only
        },
        "seconds": round(time.perf_counter() - t0, 1),
        "cells": cells,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
