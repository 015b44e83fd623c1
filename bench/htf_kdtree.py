"""kd-tree diagnosis (issue 20, Build 5): MRE, negative leaves and single-cell leaves of the DP
kd-trees on a skewed, taxi-like synthetic point set, before and after the fix.

The point set (public by construction, `skewed_taxi`): 200,000 points on a 1024 x 1024 grid —
45 % in four hot spots of 1-3 cells' width (stations, an airport), 35 % along six straight
roads (1-cell wide, with jitter), 20 % over a city-sized rectangle (a tenth of the grid's area);
most of the grid is empty, as in a city's taxi pick-ups in a region-sized bounding box.

    .venv/bin/python bench/htf_kdtree.py [--reps 5] [--eps 0.1,1.0] [--out FILE.json]

Prints JSON: per (variant, ε) the MRE (mean ± std over reps, evaluation only — it reads the
true counts), the share of negative leaves, single-cell leaves, leaves and height. Seeds fixed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.privacy import Accountant, Cost  # noqa: E402
from core.spatial.baselines.kdtree import build_kdtree  # noqa: E402
from core.spatial.evaluate import stream  # noqa: E402
from core.spatial.methods import get_method  # noqa: E402
from core.spatial.queries import (  # noqa: E402
    DEFAULT_SIZES,
    answer,
    prefix_sums,
    random_queries,
    relative_errors,
)

GRID = 1024


def skewed_taxi(n: int = 200_000, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ys, xs = [], []
    spots = [((430, 520), 1.0), ((445, 560), 1.5), ((300, 700), 2.0), ((620, 380), 3.0)]
    k = int(0.45 * n)
    for (cy, cx), s in spots:
        ys.append(rng.normal(cy, s, k // 4))
        xs.append(rng.normal(cx, s, k // 4))
    roads = [
        ((380, 400), (520, 700)),
        ((300, 450), (650, 520)),
        ((420, 300), (440, 760)),
        ((250, 600), (600, 620)),
        ((350, 350), (560, 680)),
        ((500, 420), (330, 640)),
    ]
    r = int(0.35 * n)
    for (y0, x0), (y1, x1) in roads:
        t = rng.random(r // len(roads))
        ys.append(y0 + t * (y1 - y0) + rng.normal(0, 0.7, t.size))
        xs.append(x0 + t * (x1 - x0) + rng.normal(0, 0.7, t.size))
    rest = n - sum(a.size for a in ys)
    ys.append(rng.uniform(250, 650, rest))
    xs.append(rng.uniform(300, 760, rest))
    y = np.clip(np.concatenate(ys), 0, GRID - 1).astype(int)
    x = np.clip(np.concatenate(xs), 0, GRID - 1).astype(int)
    return np.bincount(y * GRID + x, minlength=GRID * GRID).reshape(GRID, GRID).astype(np.int64)


VARIANTS = {
    "kdtree-geo": lambda: get_method("kdtree-geo"),
    "kdtree-uniform": lambda: get_method("kdtree-uniform"),
    # the two halves of the fix apart, then together (= the method "kdtree-hybrid")
    "kd-hybrid-only": lambda: partial(build_kdtree, switch_level=3),
    "kd-pruning-only": lambda: partial(build_kdtree, early_stop=32.0),
    "kdtree-hybrid": lambda: get_method("kdtree-hybrid"),
    "ug": lambda: get_method("ug"),
    "ag": lambda: get_method("ag"),
    "quadtree": lambda: get_method("quadtree"),
    "privtree": lambda: get_method("privtree"),
    "uniform": lambda: get_method("uniform"),
}


def leaf_stats(rel) -> dict:
    cells = rel.cells_per_leaf()
    return {
        "leaves": rel.n_leaves,
        "height": rel.info.get("height"),
        "negative_share": float(np.mean(rel.values < 0)),
        "single_cell_leaves": int(np.sum(cells == 1)),
    }


def run(F, variants: dict, epss, reps: int, queries: int, seed: int) -> list[dict]:
    ny, nx = F.shape
    S = prefix_sums(F)
    rows = []
    for eps in epss:
        for name, make in variants.items():
            mres, stats = [], []
            for rep in range(reps):
                Qs = {f: random_queries(ny, nx, f, queries, stream(seed, rep, f"q:{f}"))
                      for f in DEFAULT_SIZES}  # fmt: skip
                rel = make()(F, eps, Accountant(stream(seed, rep, name), Cost(eps)))
                P = prefix_sums(rel.density_raster(ny, nx))
                errs = [relative_errors(answer(P, Q), answer(S, Q), 20.0) for Q in Qs.values()]
                mres.append(float(np.concatenate(errs).mean()))
                stats.append(leaf_stats(rel))
            rows.append({
                "variant": name, "epsilon": eps, "mre": float(np.mean(mres)),
                "mre_std": float(np.std(mres, ddof=1)) if reps > 1 else None,
                **{k: float(np.mean([s[k] for s in stats])) for k in stats[0] if stats[0][k] is not None},
            })  # fmt: skip
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--eps", default="0.1,1.0")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    F = skewed_taxi()
    chosen = {k: VARIANTS[k] for k in args.variants.split(",")}
    t0 = time.perf_counter()
    rows = run(F, chosen, [float(e) for e in args.eps.split(",")], args.reps, args.queries,
               args.seed)  # fmt: skip
    out = {
        "dataset": "skewed_taxi (200,000 points, 1024 x 1024, 4 hot spots, 6 roads, a city block)",
        "protocol": {
            "reps": args.reps,
            "queries_per_size": args.queries,
            "sizes": DEFAULT_SIZES,
            "smoothing": 20.0,
            "seed": args.seed,
        },  # fmt: skip
        "results": rows,
        "seconds": round(time.perf_counter() - t0, 1),
        "evaluation": "evaluation only — uses the raw data; not differentially private",
    }
    text = json.dumps(out, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
