"""The Hilbert layout behind DAWA: a bijective, edge-connected curve whose aligned runs are
rectangles of the grid (clipped when the grid is not a power-of-two square)."""

import numpy as np
import pytest

from core.spatial.baselines.hilbert import HilbertLayout, curve_order


@pytest.mark.parametrize("k", [0, 1, 2, 3, 5])
def test_curve_visits_every_cell_once_and_steps_to_a_neighbour(k):
    lay = HilbertLayout.for_grid(2**k, 2**k)
    cells = set(zip(lay.rows.tolist(), lay.cols.tolist(), strict=True))
    assert len(cells) == 4**k
    steps = np.abs(np.diff(lay.rows)) + np.abs(np.diff(lay.cols))
    assert np.all(steps == 1)


@pytest.mark.parametrize(("ny", "nx"), [(8, 8), (5, 7), (1, 6), (9, 3)])
def test_every_aligned_run_is_exactly_its_rectangle(ny, nx):
    lay = HilbertLayout.for_grid(ny, nx)
    for level in range(2 * lay.order + 1):
        starts = np.arange(0, lay.length, 2**level)
        rects = lay.run_rects(starts, np.full(len(starts), level))
        for s, (r0, r1, c0, c1) in zip(starts, rects, strict=True):
            sl = slice(s, s + 2**level)
            inside = lay.inside[sl]
            run = set(
                zip(lay.rows[sl][inside].tolist(), lay.cols[sl][inside].tolist(), strict=True)
            )
            rect = {(r, c) for r in range(r0, r1) for c in range(c0, c1)}
            assert run == rect, (level, s)


def test_to_curve_keeps_every_count_and_masks_the_rest():
    F = np.arange(35, dtype=np.int64).reshape(5, 7)
    lay = HilbertLayout.for_grid(5, 7)
    x = lay.to_curve(F)
    assert x.sum() == F.sum() and lay.inside.sum() == 35 and curve_order(7) == 3
    assert np.all(x[~lay.inside] == 0)
    assert np.array_equal(x[lay.inside], F[lay.rows[lay.inside], lay.cols[lay.inside]])
