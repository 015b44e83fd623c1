"""DP Explorer's in-house peers (dawa, hb) and its own methods against ektelo's UGrid, AGrid,
DAWA and HB on the same matrices with the same evaluator; prints one JSON object.

Grid 256 x 256 (the 1024 matrices of bench/htf_datasets.py summed over 4 x 4 blocks: the same
public boxes), ε 0.1 and 1, R repetitions. Per repetition one query set (our evaluator:
`random_queries` at 2 / 6 / 10 % of the area, smoothing 20) scores every method; ektelo's DAWA
gets a separate random workload of the same sizes for its workload-aware step. Also
`dawa-paper` (bench/peers_dawa_paper.py: the paper's partition step on our Hilbert runs,
evaluation only) to separate "same algorithm, different code" from "different partition step".

Usage: .venv/bin/python bench/peers_ektelo.py --ektelo /tmp/peers_ektelo/venv/bin/python
       [--ektelo-home /tmp/peers_ektelo] [--reps 3] [--datasets a,b] [--holdout] > out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DPX_REGISTRY", tempfile.mkdtemp(prefix="dpx-bench-"))

from bench.peers_dawa_paper import build_dawa_paper  # noqa: E402
from core.privacy import Accountant  # noqa: E402
from core.spatial.evaluate import stream  # noqa: E402
from core.spatial.methods import get_method  # noqa: E402
from core.spatial.queries import (  # noqa: E402
    DEFAULT_SIZES,
    answer,
    prefix_sums,
    random_queries,
    relative_errors,
)

OURS = ["dawa", "hb", "ug", "ag", "privtree", "auto"]
PEERS = ["dawa", "hb", "ugrid", "agrid"]
DEFAULT_DATASETS = [
    "gauss-s100-1e+05", "city-mixture-1e+05", "geonames-cities-world", "us-zip-centroids",
]  # fmt: skip


def downsample(F: np.ndarray, factor: int = 4) -> np.ndarray:
    ny, nx = F.shape
    return F.reshape(ny // factor, factor, nx // factor, factor).sum(axis=(1, 3))


def mre_of_raster(raster: np.ndarray, truth: dict, Qs: dict) -> float:
    P = prefix_sums(np.asarray(raster, float))
    errs = [relative_errors(answer(P, Qs[f]), truth[f], 20.0) for f in DEFAULT_SIZES]
    return float(np.concatenate(errs).mean())


def run_ektelo(python, home, F, jobs, workdir) -> dict:
    """{(method, eps, rep): raster} from one ektelo process (jobs: (method, eps, rep, seed))."""
    np.save(workdir / "F.npy", F)
    spec = {"matrix": str(workdir / "F.npy"), "workload": str(workdir / "W.npy"), "jobs": []}
    for method, eps, rep, seed in jobs:
        spec["jobs"].append([method, eps, seed, str(workdir / f"{method}-{eps}-{rep}.npy")])
    (workdir / "jobs.json").write_text(json.dumps(spec))
    env = {**os.environ, "PYTHONPATH": home, "EKTELO_DATA": str(workdir),
           "EKTELO_HOME": home, "EKTELO_LOG_PATH": str(workdir), "EKTELO_LOG_LEVEL": "ERROR"}  # fmt: skip
    subprocess.run([python, str(ROOT / "bench" / "peers_ektelo_runner.py"),
                    str(workdir / "jobs.json")], check=True, env=env)  # fmt: skip
    return {(m, e, r): np.load(workdir / f"{m}-{e}-{r}.npy") for m, e, r, _ in jobs}


def run_cell(F, eps, args, workdir) -> dict:
    ny, nx = F.shape
    S = prefix_sums(F.astype(np.int64))
    Qs, truth = {}, {}
    for rep in range(args.reps):
        Qs[rep] = {f: random_queries(ny, nx, f, args.queries, stream(args.seed, rep, f"q:{f}"))
                   for f in DEFAULT_SIZES}  # fmt: skip
        truth[rep] = {f: answer(S, Q) for f, Q in Qs[rep].items()}
    W = np.concatenate([random_queries(ny, nx, f, 100, stream(args.seed, 0, f"w:{f}"))
                        for f in DEFAULT_SIZES])  # fmt: skip
    np.save(workdir / "W.npy", W)
    mre: dict[str, list[float]] = {}
    for rep in range(args.reps):
        for m in OURS:
            rel = get_method(m)(F, eps, Accountant(stream(args.seed, rep, m)))
            mre.setdefault(m, []).append(
                mre_of_raster(rel.density_raster(ny, nx), truth[rep], Qs[rep])
            )
        rel = build_dawa_paper(F, eps, seed=args.seed * 1000 + rep)
        mre.setdefault("dawa-paper", []).append(
            mre_of_raster(rel.density_raster(ny, nx), truth[rep], Qs[rep]))  # fmt: skip
    jobs = [(m, eps, rep, args.seed * 100 + rep) for m in PEERS for rep in range(args.reps)]
    rasters = run_ektelo(args.ektelo, args.ektelo_home, F, jobs, workdir)
    for (m, _, rep), raster in sorted(rasters.items(), key=lambda kv: kv[0][2]):
        mre.setdefault(f"ektelo-{m}", []).append(mre_of_raster(raster, truth[rep], Qs[rep]))
    return {k: float(np.mean(v)) for k, v in mre.items()} | {"per_rep": mre}


def summary(c: dict) -> dict:
    ours_best = min(("dawa", "hb", "ug", "ag", "privtree"), key=lambda m: c[m])
    peers = {m: c[f"ektelo-{m}"] for m in PEERS}
    best_peer = min(peers, key=peers.get)
    return {
        "dawa/ektelo-dawa": c["dawa"] / c["ektelo-dawa"],
        "dawa-paper/ektelo-dawa": c["dawa-paper"] / c["ektelo-dawa"],
        "hb/ektelo-hb": c["hb"] / c["ektelo-hb"],
        "ug/ektelo-ugrid": c["ug"] / c["ektelo-ugrid"],
        "ag/ektelo-agrid": c["ag"] / c["ektelo-agrid"],
        "ours_best": ours_best, "best_peer": f"ektelo-{best_peer}",
        "ours_best/best_peer": c[ours_best] / peers[best_peer],
        "auto/best_peer": c["auto"] / peers[best_peer],
    }  # fmt: skip


def main() -> None:
    from bench.htf_datasets import holdout_sets, point_sets

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ektelo", required=True, help="python of the venv where ektelo imports")
    ap.add_argument("--ektelo-home", default="/tmp/peers_ektelo")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--eps", default="0.1,1.0")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=2031)
    ap.add_argument("--datasets", default=",".join(DEFAULT_DATASETS))
    ap.add_argument("--holdout", action="store_true", help="the held-out point sets")
    args = ap.parse_args()
    only = set(args.datasets.split(",")) if args.datasets else None
    sets = holdout_sets() if args.holdout else point_sets()
    cells, t0 = [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="peers-ektelo-") as tmp:
        for ps in sets:
            if only and ps.name not in only and not args.holdout:
                continue
            F = downsample(ps.load())
            for eps in (float(v) for v in args.eps.split(",")):
                c = run_cell(F, eps, args, Path(tmp))
                cells.append({"dataset": ps.name, "kind": ps.kind, "n": int(F.sum()),
                              "epsilon": eps, "mre": c, "ratios": summary(c)})  # fmt: skip
                print(f"{ps.name} eps={eps} ({time.perf_counter() - t0:.0f} s) "
                      f"{summary(c)}", file=sys.stderr)  # fmt: skip
    out = {
        "protocol": {"grid": 256, "from": "1024 matrices summed over 4 x 4 blocks",
                     "epsilons": args.eps, "reps": args.reps, "seed": args.seed,
                     "queries_per_size": args.queries, "query_sizes": list(DEFAULT_SIZES),
                     "smoothing": 20, "ektelo_dawa": "ratio 0.25, approx (power-of-two "
                     "intervals), GreedyH on a random range workload of the same sizes",
                     "ektelo_grids": "UGrid/AGrid given the true N as data_scale"},
        "seconds": round(time.perf_counter() - t0, 1),
        "cells": cells,
    }  # fmt: skip
    print(json.dumps(out))


if __name__ == "__main__":
    main()
