"""UG (spec htf.md §3.3, anchors §6)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import InputError
from core.privacy import Accountant, Noise
from core.spatial.baselines import build_ug
from core.spatial.baselines.rectangles import rect_counts, summed_area
from core.spatial.baselines.ug import ug_edges
from core.spatial.common import near_equal_edges

# §6 table: (N, eps) -> UG cells per axis with sizing="intervals" and with sizing="side"
INTERVALS = {
    (1e5, 0.1): 32,
    (1e5, 0.3): 55,
    (1e5, 0.5): 71,
    (1e6, 0.1): 100,
    (1e6, 0.3): 174,
    (1e6, 0.5): 224,
}
SIDE = {(1e5, 0.1): 32, (1e5, 0.5): 74, (1e6, 0.1): 103, (1e6, 0.3): 205, (1e6, 0.5): 256}


@pytest.mark.parametrize(("key", "m"), INTERVALS.items())
def test_interval_sizing_anchors(key, m):
    re, ce = ug_edges(key[0], key[1], 1024, 1024)  # N_hat injected as N, as §6 prescribes
    assert len(re) - 1 == m and len(ce) - 1 == m
    sizes = np.diff(re)
    assert sizes.min() >= 1 and sizes.max() - sizes.min() <= 1


@pytest.mark.parametrize(("key", "m"), SIDE.items())
def test_side_sizing_anchors(key, m):
    re, ce = ug_edges(key[0], key[1], 1024, 1024, sizing="side")
    assert len(re) - 1 == m and len(ce) - 1 == m
    sizes = np.diff(re)
    side = sizes[0]
    assert np.all(sizes[:-1] == side) and 1 <= sizes[-1] <= side
    assert re[0] == 0 and re[-1] == 1024


def test_non_positive_noisy_total_gives_one_cell_and_clamps_to_extent():
    for sizing in ("intervals", "side"):
        re, ce = ug_edges(-50.0, 0.5, 30, 20, sizing=sizing)
        assert re.tolist() == [0, 30] and ce.tolist() == [0, 20]
    re, ce = ug_edges(1e9, 1.0, 30, 20)  # m far above the extents: one cell per grid cell
    assert len(re) - 1 == 30 and len(ce) - 1 == 20


@given(st.integers(1, 5000), st.data())
def test_near_equal_edges_property(n, data):
    m = data.draw(st.integers(1, n))
    e = near_equal_edges(n, m)
    sizes = np.diff(e)
    assert len(e) == m + 1 and e[0] == 0 and e[-1] == n
    assert sizes.min() >= 1 and sizes.max() - sizes.min() <= 1


def test_build_reproduces_the_anchor_grid():
    """N = 1e6 exactly; eps_n = 0.29 makes N_hat = N +- tens, far from moving ceil(173.2)."""
    F = np.zeros((1024, 1024), dtype=np.int64)
    F[::4, ::4] = 15  # 65,536 cells x 15 ...
    F[0, 0] += 1_000_000 - F.sum()  # ... topped up to exactly 1e6 points
    for sizing, m in (("intervals", 174), ("side", 205)):
        rel = build_ug(F, 0.3, Accountant(Noise.seeded(0)), eps_n=0.29, sizing=sizing)
        assert abs(rel.info["n_hat"] - 1e6) < 1000
        assert rel.info["cells_per_axis"] == [m, m]
        assert rel.n_leaves == m * m


def test_noise_free_limit_gives_exact_block_counts():
    F = np.random.default_rng(1).poisson(4.0, size=(23, 17)).astype(np.int64)
    n = F.sum()
    eps = 1e9
    c = n * eps / 4.5**2  # m = 4.5 -> 5 cells per axis
    rel = build_ug(F, eps, Accountant(Noise.seeded(3)), eps_n=1e8, c=c)
    assert rel.info["cells_per_axis"] == [5, 5]
    assert np.array_equal(rel.values, rect_counts(summed_area(F), rel.leaves))


def test_cell_noise_scale():
    F = np.random.default_rng(2).poisson(0.95, size=(1024, 1024)).astype(np.int64)
    eps, eps_n = 0.3, 1e-4
    rel = build_ug(F, eps, Accountant(Noise.seeded(17)), eps_n=eps_n)
    resid = rel.values - rect_counts(summed_area(F), rel.leaves)
    q = math.exp(-(eps - eps_n))
    var = 2 * q / (1 - q) ** 2
    n = resid.size
    assert n > 25_000
    assert abs(resid.mean()) < 5 * math.sqrt(var / n)
    assert abs(resid.var() / var - 1) < 0.06  # relative sd sqrt(5/n) < 1.5 %


def test_rejects_unknown_sizing():
    with pytest.raises(InputError):
        build_ug(np.ones((4, 4), dtype=np.int64), 0.5, Accountant(Noise.seeded(1)), sizing="x")
    with pytest.raises(InputError):
        build_ug(np.ones((4, 4), dtype=np.int64), 0.5, Accountant(Noise.seeded(1)), public_n=-1)
    with pytest.raises(InputError):
        build_ug(np.ones((4, 4), dtype=np.int64), 0.5, Accountant(Noise.seeded(1)), eps_n=0.5)
