"""Cell mapping and the frequency matrix (spec htf.md §1.3, §6)."""

import numpy as np
import pytest

from core.errors import InputError
from core.spatial.grid import Grid, bin_points


def test_cell_mapping_edges():
    g = Grid(4, 8, (10.0, 20.0, 18.0, 24.0))  # dx = 1, dy = 1
    lon = np.array([10.0, 11.0, 18.0, 17.999, 12.5])
    lat = np.array([20.0, 20.0, 24.0, 23.5, 21.0])
    b = bin_points(lon, lat, g)
    assert b.F[0, 0] == 1  # x_min -> column 0, y_min -> row 0 (south)
    assert b.F[0, 1] == 1  # x_min + dx -> column 1
    assert b.F[3, 7] == 2  # the max edge goes to the last cell
    assert b.F[1, 2] == 1
    assert b.F.sum() == 5 and b.n_dropped == 0 and b.F.dtype == np.int64


def test_points_outside_are_dropped_and_counted():
    g = Grid(2, 2, (0.0, 0.0, 1.0, 1.0))
    b = bin_points(np.array([0.5, 1.5, -0.1, 0.5]), np.array([0.5, 0.5, 0.5, 1.01]), g)
    assert (b.n_used, b.n_dropped) == (1, 3)
    assert b.F.sum() == 1


def test_row_follows_latitude_column_longitude():
    g = Grid(10, 5, (0.0, 0.0, 5.0, 10.0))
    b = bin_points(np.array([4.5]), np.array([0.5]), g)
    assert b.F[0, 4] == 1  # south-east corner: row 0, last column


@pytest.mark.parametrize(
    "args",
    [(0, 4, (0, 0, 1, 1)), (4, 5000, (0, 0, 1, 1)), (4, 4, (1, 0, 1, 1)), (4, 4, (0, 2, 1, 1))],
)
def test_bad_grids_are_rejected(args):
    with pytest.raises(InputError):
        Grid(*args)
