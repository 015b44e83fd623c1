"""The location methods' table (core/spatial/methods.py CATALOG): each row's release carries
the row's own name and label wherever it goes (CLI JSON, export, registry record), and a row
offered by some doors only must say why."""

from __future__ import annotations

import numpy as np
import pytest

from core.privacy import Accountant, Cost, Noise
from core.spatial.export import leaf_noise_std, metadata
from core.spatial.grid import Grid
from core.spatial.methods import LABELS, LeafNoise, get_method, method
from core.spatial.record import location_artefact

NAMED = sorted(set(LABELS) - {"auto"})  # auto releases under the name of what it chose


def _F(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    F = rng.poisson(0.5, size=(32, 32))
    F[4:12, 8:20] += rng.poisson(30, size=(8, 12))
    return F


@pytest.mark.parametrize("name", NAMED)
def test_a_release_is_named_and_labelled_after_the_method_asked_for(name):
    """quadtree-leaves was exported and recorded as "quadtree" (labelled QuadTree), the HTF
    variants as "htf+": a reader could not tell which method drew."""
    rel = get_method(name)(_F(), 0.5, Accountant(Noise.seeded(1), Cost(0.5)))
    grid = Grid(32, 32, (0.0, 0.0, 1.0, 1.0))
    assert rel.method == name
    assert rel.info["label"] == LABELS[name]
    meta = metadata(rel, grid, Noise.seeded(1).describe())
    assert (meta["method"], meta["label"]) == (name, LABELS[name])
    art = location_artefact(rel, grid)
    assert (art.method, art.label) == (name, LABELS[name])
    # the export states each leaf's noise exactly where the table says the method does
    assert (leaf_noise_std(rel) is not None) == (method(name).leaf_noise is not LeafNoise.COMBINED)


def test_a_row_missing_from_a_door_must_say_why():
    from core.spatial.methods import CATALOG, Door, Family, Method, location_method_names

    ug = get_method("ug")
    with pytest.raises(ValueError, match="say why"):
        Method("x", "X", "test row", ug, Family.PEER, doors=frozenset({Door.COMPARE}))
    row = Method("x", "X", "test row", ug, Family.PEER, doors=frozenset({Door.COMPARE}),
                 why_not="evaluation only")  # fmt: skip
    assert row.offered(Door.COMPARE) and not row.offered(Door.RELEASE)
    assert all(m.why_not for m in CATALOG if len(m.doors) < len(Door))
    for door in Door:  # every door's names are rows, the recommended one first
        names = location_method_names(door)
        assert names[0] == "auto" and set(names) <= set(LABELS)


def test_every_in_house_builder_is_a_row_of_the_table():
    from core.spatial.baselines import BASELINES
    from core.spatial.methods import CATALOG, Family

    rows = {m.name for m in CATALOG if m.family in (Family.PAPER, Family.PEER)}
    assert rows - {"htf"} == set(BASELINES)
