"""Stored bytes and attach/read time of a large location artefact (issue 29, item 6): a 1M-leaf
HB-shaped histogram (1000 x 1000 unit leaves, Laplace-noised counts, one noise scale per leaf),
attached to an unregistered run of a throwaway registry, then read back. Prints JSON.

    python bench/artefact_storage.py [--side 1000] [--dir /tmp/artefact-bench]

Compares the stored body (`length(artefact)` in SQLite) with the artefact's JSON text (what the
registry stored before v7, written the old way into a second registry), the file sizes (database
plus write-ahead log) after the attach, and the attach and read times of both."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from core.privacy import Cost
from core.registry import Registry
from core.registry.storage import artefact_sha256
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
    # before v7: the JSON text (and its canonical hash) written as the old attach did
    old = Registry(directory / "registry-json")
    old_run = old.charge("location", None, {"method": "hb"}, Cost(1.0), "secure")
    t0 = time.perf_counter()
    with old._write() as con:
        con.execute(
            "UPDATE releases SET status='released', artefact=?, artefact_sha256=? WHERE id=?",
            (json.dumps(art, default=str), artefact_sha256(art), old_run.id),
        )
    old_attach_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert old.release(old_run.id).artefact == art
    old_read_s = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "leaves": args.side * args.side,
                "json_bytes": json_bytes,
                "stored_bytes": stored[0][0],
                "ratio": round(stored[0][0] / json_bytes, 4),
                "file_bytes": reg.file_bytes(),
                "json_file_bytes": old.file_bytes(),
                "attach_s": round(attach_s, 3),
                "json_attach_s": round(old_attach_s, 3),
                "read_s": round(read_s, 3),
                "json_read_s": round(old_read_s, 3),
                "round_trip_equal": back == art,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
