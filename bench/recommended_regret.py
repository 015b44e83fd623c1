"""Would a user have done better by always picking one fixed method? Recommended (`auto`) against
every in-house candidate, per collection of point sets (issue 31); prints one JSON object.

For each collection (bench/htf_datasets.py, bench/htf_heldout5.py, bench/recommended_fresh.py;
a collection whose packages are missing is skipped and listed under "skipped"), grid 1024,
each epsilon and each repetition: every method's MRE (core/spatial/queries.py: the page's and
`dpx compare`'s query sizes and smoothing; the same queries for every method of a repetition,
so comparisons are paired) and Recommended's. Per collection:

* per cell, the best method in hindsight (lowest mean MRE over the repetitions) and each
  method's and Recommended's regret against it (mean MRE / the best's);
* the best single fixed method: the one with the lowest geometric-mean regret over the cells;
* Recommended's geometric-mean regret and worst cell, and its geometric-mean regret over the
  best fixed method's ("vs_best_fixed"), each with a 90 % bootstrap interval: repetitions are
  resampled within every cell (the same draw for every method: paired), the best in hindsight
  and the best fixed method are re-picked in each resample.

`seen` says whether Recommended's rules were fitted on (or chosen by looking at) the
collection: round 7 chose its default method and its thresholds on design + held-out sets 1-5;
the fresh collection was gathered before and run once after (bench/recommended_fresh.py).

Usage: nice -n 10 .venv/bin/python bench/recommended_regret.py [--reps 5] [--eps 0.1,1]
           [--collections design,heldout1,...] [--reuse earlier.json] > out.json
       .venv/bin/python bench/recommended_regret.py --quick          # seconds: a smoke run
       .venv/bin/python bench/recommended_regret.py --table out.json  # the markdown table
`--reuse` takes the fixed methods' per-repetition MREs from an earlier run with the same
protocol (seed, repetitions, queries) and runs only Recommended: a rule change costs minutes.
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
    DEFAULT_SMOOTHING,
    answer,
    prefix_sums,
    random_queries,
    relative_errors,
)

METHODS = ("ug", "ag", "privtree", "dawa", "hb", "kdtree-hybrid")  # every in-house candidate
RECOMMENDED = "auto"
SEEN = {  # fitted on, or looked at while choosing round 7's default and thresholds
    "design": True, "heldout1": True, "heldout2": True, "heldout3": True, "heldout4": True,
    "heldout5": True, "fresh31": False,
}  # fmt: skip


def collections() -> dict:
    """name -> a function returning its point sets (empty when its packages are missing)."""
    from bench import htf_datasets as d

    def heldout5():
        from bench.htf_heldout5 import heldout5_sets

        return heldout5_sets()

    def fresh():
        from bench.recommended_fresh import fresh_sets

        return fresh_sets()

    return {
        "design": lambda: [*d.point_sets(), *d.holdout_sets()],
        "heldout1": d.heldout_sets,
        "heldout2": d.heldout2_sets,
        "heldout3": d.heldout3_sets,
        "heldout4": d.heldout4_sets,
        "heldout5": heldout5,
        "fresh31": fresh,
    }


def mre(rel, truth: dict, Qs: dict, shape) -> float:
    P = prefix_sums(rel.density_raster(*shape))
    errs = [relative_errors(answer(P, Qs[f]), truth[f], DEFAULT_SMOOTHING) for f in DEFAULT_SIZES]
    return float(np.concatenate(errs).mean())


def run_cell(F: np.ndarray, eps: float, args, methods, reused: dict | None) -> dict:
    """Per repetition: each method's MRE (or the reused ones) and Recommended's, with its pick."""
    ny, nx = F.shape
    S = prefix_sums(F.astype(np.int64))
    per_rep: dict[str, list[float]] = {m: [] for m in (*methods, RECOMMENDED)}
    picks = []
    for rep in range(args.reps):
        Qs = {
            f: random_queries(ny, nx, f, args.queries, stream(args.seed, rep, f"queries:{f}"))
            for f in DEFAULT_SIZES
        }
        truth = {f: answer(S, Q) for f, Q in Qs.items()}
        for m in (*methods, RECOMMENDED):
            if reused is not None and m != RECOMMENDED:
                per_rep[m].append(reused[m][rep])
                continue
            rel = get_method(m)(F, eps, Accountant(stream(args.seed, rep, m), Cost(eps)))
            per_rep[m].append(mre(rel, truth, Qs, (ny, nx)))
            if m == RECOMMENDED:
                sel = rel.info["selection"]
                picks.append({"method": sel.method, "rule": sel.rule, "epsilon": sel.epsilon})
    return {"per_rep": per_rep, "picks": picks}


def _gm(x) -> float:
    return float(np.exp(np.mean(np.log(x))))


def _stats(cells: list[dict], methods, idx: list[np.ndarray] | None = None) -> dict:
    """Regrets of one (possibly resampled) collection."""
    means = []
    for k, c in enumerate(cells):
        pick = slice(None) if idx is None else idx[k]
        means.append({m: float(np.mean(np.asarray(c["per_rep"][m])[pick])) for m in c["per_rep"]})
    best = [min(methods, key=lambda m, mm=mm: mm[m]) for mm in means]
    regret = {
        m: np.array([mm[m] / mm[b] for mm, b in zip(means, best, strict=True)])
        for m in (*methods, RECOMMENDED)
    }
    gms = {m: _gm(r) for m, r in regret.items()}
    fixed = min(methods, key=gms.get)
    return {
        "best": best,
        "regret": regret,
        "gm": gms,
        "best_fixed": fixed,
        "vs_best_fixed": gms[RECOMMENDED] / gms[fixed],
        "worst": float(regret[RECOMMENDED].max()),
    }


def _counts(names) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in names:
        out[n] = out.get(n, 0) + 1
    return out


def summarize(cells: list[dict], methods, boot: int = 1000, seed: int = 0) -> dict:
    """One collection's figures, with 90 % bootstrap intervals over repetitions."""
    s = _stats(cells, methods)
    rng = np.random.default_rng(seed)
    reps = [len(c["per_rep"][RECOMMENDED]) for c in cells]
    draws = {"gm": [], "vs_best_fixed": [], "worst": []}
    for _ in range(boot if min(reps) > 1 else 0):
        b = _stats(cells, methods, [rng.integers(0, r, r) for r in reps])
        draws["gm"].append(b["gm"][RECOMMENDED])
        draws["vs_best_fixed"].append(b["vs_best_fixed"])
        draws["worst"].append(b["worst"])
    ci = {k: [float(np.quantile(v, 0.05)), float(np.quantile(v, 0.95))] if v else None
          for k, v in draws.items()}  # fmt: skip
    fixed = s["best_fixed"]
    return {
        "cells": len(cells),
        "best_fixed": fixed,
        "gm_regret": {m: round(v, 4) for m, v in s["gm"].items()},
        "worst_regret": {m: round(float(r.max()), 4) for m, r in s["regret"].items()},
        "recommended": {
            "gm_regret": s["gm"][RECOMMENDED],
            "gm_regret_ci90": ci["gm"],
            "vs_best_fixed": s["vs_best_fixed"],
            "vs_best_fixed_ci90": ci["vs_best_fixed"],
            "worst_cell": s["worst"],
            "worst_cell_ci90": ci["worst"],
            "beats_best_fixed_cells": int(np.sum(s["regret"][RECOMMENDED] < s["regret"][fixed])),
        },
        "per_cell": [
            {"dataset": c["dataset"], "epsilon": c["epsilon"], "best": b,
             "recommended_regret": round(float(s["regret"][RECOMMENDED][k]), 4),
             "best_fixed_regret": round(float(s["regret"][fixed][k]), 4),
             "picks": _counts(p["method"] for p in c["picks"])}
            for k, (c, b) in enumerate(zip(cells, s["best"], strict=True))
        ],
    }  # fmt: skip


def table(result: dict) -> str:
    """The markdown table of docs/benchmarks/recommended.md."""
    methods = result["protocol"]["methods"]
    head = ["collection", "seen", "cells", "Recommended gm (90 % CI)", "best fixed",
            "Recommended / best fixed (90 % CI)", "worst cell (90 % CI)",
            *[f"{m} gm" for m in methods]]  # fmt: skip
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in result["collections"].items():
        r = s["recommended"]

        def ci(v):
            return f" ({v[0]:.2f}-{v[1]:.2f})" if v else ""

        rows.append("| " + " | ".join([
            name, "yes" if s["seen"] else "**no**", str(s["cells"]),
            f"{r['gm_regret']:.3f}{ci(r['gm_regret_ci90'])}",
            f"{s['best_fixed']} {s['gm_regret'][s['best_fixed']]:.3f}",
            f"{r['vs_best_fixed']:.3f}{ci(r['vs_best_fixed_ci90'])}",
            f"{r['worst_cell']:.2f}{ci(r['worst_cell_ci90'])}",
            *[f"{s['gm_regret'][m]:.2f}" for m in methods],
        ]) + " |")  # fmt: skip
    return "\n".join(rows)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collections", default=",".join(SEEN))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--eps", default="0.1,1")
    ap.add_argument("--queries", type=int, default=500, help="per query size and repetition")
    ap.add_argument("--seed", type=int, default=2031)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--datasets", default=None, help="only these point sets (comma-separated)")
    ap.add_argument("--reuse", default=None, help="an earlier output: its methods' MREs")
    ap.add_argument("--quick", action="store_true", help="2 small sets, 2 repetitions, eps 1")
    ap.add_argument("--table", default=None, help="print the markdown table of an output")
    args = ap.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return {}
    if args.quick:
        args.collections, args.reps, args.eps, args.queries = "heldout4", 2, "1", 100
        args.datasets = args.datasets or "ho4-fiji-quakes,ho4-snow-cholera-deaths"
        args.methods = "ug,ag,privtree"
    methods = tuple(args.methods.split(","))
    epss = [float(v) for v in args.eps.split(",")]
    only = set(args.datasets.split(",")) if args.datasets else None
    old = {}
    if args.reuse:
        prev = json.loads(Path(args.reuse).read_text())
        p = prev["protocol"]
        if (p["seed"], p["reps"], p["queries_per_size"]) != (args.seed, args.reps, args.queries):
            raise SystemExit("--reuse needs the same --seed, --reps and --queries")
        for c in prev["cells"]:
            old[(c["dataset"], c["epsilon"])] = c["per_rep"]
    out = {"collections": {}, "skipped": [], "cells": []}
    t0 = time.perf_counter()
    for name, load_sets in collections().items():
        if name not in args.collections.split(","):
            continue
        sets = [ps for ps in load_sets() if not only or ps.name in only]
        if not sets:
            out["skipped"].append(name)
            continue
        cells = []
        for ps in sets:
            F = ps.load()
            for eps in epss:
                reused = old.get((ps.name, eps))
                c = run_cell(F, eps, args, methods, reused)
                cells.append({"collection": name, "dataset": ps.name, "kind": ps.kind,
                              "n": int(F.sum()), "epsilon": eps, **c})  # fmt: skip
                print(f"{name} {ps.name} eps={eps} ({time.perf_counter() - t0:.0f} s)",
                      file=sys.stderr)  # fmt: skip
        out["collections"][name] = {"seen": SEEN[name], **summarize(cells, methods)}
        out["cells"] += cells
    out["protocol"] = {
        "grid": 1024, "epsilons": epss, "reps": args.reps, "seed": args.seed,
        "queries_per_size": args.queries, "query_sizes": list(DEFAULT_SIZES),
        "smoothing": DEFAULT_SMOOTHING, "methods": list(methods), "bootstrap": "90 %, 1000 "
        "resamples of the repetitions within each cell, paired across methods",
    }  # fmt: skip
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


if __name__ == "__main__":
    result = main()
    if result:
        print(json.dumps(result))
