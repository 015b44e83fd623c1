"""Stored bytes and attach/read time of a large location artefact (issue 29, item 6): a 1M-leaf
HB-shaped histogram (1000 x 1000 unit leaves, Laplace-noised counts, one noise scale per leaf),
attached to an unregistered run of a throwaway registry, then read back. Prints JSON.

    python bench/artefact_storage.py [--side 1000] [--dir /tmp/artefact-bench]

Compares the stored body (`length(artefact)` in SQLite) with the artefact's JSON text (what the
registry stored before v7), and the file size after the attach."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from core.privacy import Cost
from core.registry import Registry
from core.spatial.record import GridSpec, LocationArtefact


def artefact(side: int, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    counts = rng.poisson(3.0, side * side).astype(np.float64)
    scale = 2.0 * 11 / 1.0  # HB-like: height x 1/eps, the same for every leaf
    values = counts + rng.laplace(0.0, scale, side * side)
    r, c = np.divmod(np.arange(side * side), side)
    leaves = np.stack([r, r + 1, c, c + 1], axis=1).tolist()
    return LocationArtefact(
        method="hb",
        label="HB",
        unit="one point",
        grid=GridSpec((-74.1, 40.6, -73.7, 40.9), side, side),
        leaves=tuple(map(tuple, leaves)),
        values=tuple(values.tolist()),
        leaf_scale=tuple([scale] * (side * side)),
        height=11,
    ).to_json()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", type=int, default=1000)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    art = artefact(args.side)
    json_bytes = len(json.dumps(art, default=str).encode())
    directory = Path(args.dir or tempfile.mkdtemp(prefix="artefact-bench-"))
    reg = Registry(directory / "registry")
    run = reg.charge("location", None, {"method": "hb"}, Cost(1.0), "secure")
    t0 = time.perf_counter()
    reg.attach(run.id, art)
    attach_s = time.perf_counter() - t0
    stored = reg._read("SELECT length(CAST(artefact AS BLOB)) FROM releases WHERE id=?", (run.id,))
    t0 = time.perf_counter()
    back = reg.release(run.id).artefact
    read_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    json.loads(json.dumps(art, default=str))
    json_read_s = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "leaves": args.side * args.side,
                "json_bytes": json_bytes,
                "stored_bytes": stored[0][0],
                "ratio": round(stored[0][0] / json_bytes, 4),
                "file_bytes": reg.file_bytes(),
                "attach_s": round(attach_s, 3),
                "read_s": round(read_s, 3),
                "json_loads_s": round(json_read_s, 3),
                "round_trip_equal": back == art,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
