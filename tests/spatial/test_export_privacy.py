"""Exported files of a seeded run are labelled but never carry the seed (audit regression test):
with the seed, anyone could regenerate the noise and subtract it from the noisy counts."""

import json

import numpy as np

from core.privacy import Accountant, Cost, Noise
from core.spatial.export import csv_sidecar_text, to_csv_text, to_geojson_text
from core.spatial.grid import Grid
from core.spatial.htf import build_htf

SEED = 987654321


def test_seeded_exports_are_labelled_and_omit_the_seed():
    F = np.random.default_rng(0).integers(0, 40, size=(16, 20))
    noise = Noise.seeded(SEED)
    rel = build_htf(F, 1.0, Accountant(noise, Cost(1.0)))
    grid = Grid(16, 20, (-118.5, 33.9, -118.0, 34.3))
    gj_text = to_geojson_text(rel, grid, noise.describe())
    csv_text = to_csv_text(rel, grid, noise.describe())
    meta = json.loads(gj_text)["metadata"]
    assert meta["mode"] == "seeded" and "not for real releases" in meta["noise"]["warning"]
    assert "seed" not in meta["noise"]
    assert str(SEED) not in gj_text and str(SEED) not in csv_text
    sidecar = csv_sidecar_text(rel, grid, noise.describe())  # the plain CSV's metadata file
    assert str(SEED) not in sidecar
    assert '"mode": "seeded"' in sidecar and "not for real releases" in sidecar
