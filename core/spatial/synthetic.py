"""The paper's synthetic location data (spec htf.md §5.4), generated on demand from a seed.

Points live on the cell domain [0, nx) x [0, ny) (public by construction); `to_lonlat` places
that domain on a public geographic box so the same data can be mapped and uploaded.
"""

from __future__ import annotations

import numpy as np

GRID = 1024
SIGMAS = (20.0, 50.0, 100.0)

# The paper's real-data area: 70 x 70 km around (34.05223, -118.24368), Los Angeles. Used as
# the public box onto which the synthetic cell domain is mapped for the map view.
LA_CENTRE = (34.05223, -118.24368)
_HALF_LAT = 35.0 / 110.574
_HALF_LON = 35.0 / (111.320 * np.cos(np.radians(LA_CENTRE[0])))
SYNTHETIC_BBOX = (
    round(float(LA_CENTRE[1] - _HALF_LON), 5),
    round(LA_CENTRE[0] - _HALF_LAT, 5),
    round(float(LA_CENTRE[1] + _HALF_LON), 5),
    round(LA_CENTRE[0] + _HALF_LAT, 5),
)


def _gaussian_cluster(rng, n, centre, sigma, ny, nx):
    """n points from N(centre, sigma^2 I), redrawing those outside the domain (exactly n)."""
    out_x, out_y, have = [], [], 0
    while have < n:
        k = max(2 * (n - have), 1024)
        x = rng.normal(centre[0], sigma, k)
        y = rng.normal(centre[1], sigma, k)
        ok = (x >= 0) & (x < nx) & (y >= 0) & (y < ny)
        x, y = x[ok][: n - have], y[ok][: n - have]
        out_x.append(x)
        out_y.append(y)
        have += len(x)
    return np.concatenate(out_x), np.concatenate(out_y)


def gaussian_points(
    n: int, sigma: float, rng: np.random.Generator, ny: int = GRID, nx: int = GRID
) -> tuple[np.ndarray, np.ndarray]:
    """Single Gaussian (paper §5.1): centre uniform on the domain; returns cell coords (x, y)."""
    centre = (rng.uniform(0, nx), rng.uniform(0, ny))
    return _gaussian_cluster(rng, int(n), centre, float(sigma), ny, nx)


def mixture_points(
    n: int,
    rng: np.random.Generator,
    k: int = 5,
    sigmas: tuple[float, ...] = SIGMAS,
    background: float = 0.05,
    ny: int = GRID,
    nx: int = GRID,
) -> tuple[np.ndarray, np.ndarray]:
    """A "city": k clusters with uniform centres, sigma drawn from `sigmas`, Dirichlet(1)
    weights, plus a uniform background share."""
    n_bg = int(round(background * n))
    weights = rng.dirichlet(np.ones(k))
    sizes = rng.multinomial(n - n_bg, weights)
    xs, ys = [rng.uniform(0, nx, n_bg)], [rng.uniform(0, ny, n_bg)]
    for size in sizes:
        centre = (rng.uniform(0, nx), rng.uniform(0, ny))
        x, y = _gaussian_cluster(rng, int(size), centre, float(rng.choice(sigmas)), ny, nx)
        xs.append(x)
        ys.append(y)
    return np.concatenate(xs), np.concatenate(ys)


def to_matrix(x: np.ndarray, y: np.ndarray, ny: int = GRID, nx: int = GRID) -> np.ndarray:
    """Frequency matrix of cell coordinates: cell = floor(coordinate)."""
    r = np.minimum(np.floor(y).astype(np.int64), ny - 1)
    c = np.minimum(np.floor(x).astype(np.int64), nx - 1)
    return np.bincount(r * nx + c, minlength=ny * nx).reshape(ny, nx)


def gaussian_matrix(n: int, sigma: float, seed: int, grid: int = GRID) -> np.ndarray:
    """Benchmark helper: the single-Gaussian frequency matrix for (n, sigma, seed)."""
    x, y = gaussian_points(n, sigma, np.random.default_rng(seed), grid, grid)
    return to_matrix(x, y, grid, grid)


def to_lonlat(
    x: np.ndarray, y: np.ndarray, bbox=SYNTHETIC_BBOX, ny: int = GRID, nx: int = GRID
) -> tuple[np.ndarray, np.ndarray]:
    """Cell coordinates to lon/lat on `bbox` (cell (r, c) of the grid over bbox = cell (y, x))."""
    x0, y0, x1, y1 = bbox
    return x0 + x / nx * (x1 - x0), y0 + y / ny * (y1 - y0)
