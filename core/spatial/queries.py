"""Range-count queries and their error (spec htf.md §4, §5.1-5.2).

Answers assume uniformity inside each leaf: a per-cell density raster plus a float64
summed-area table answers any number of rectangles in O(1) each. Queries are integer
half-open cell rectangles (r0, r1, c0, c1), like leaves.
"""

from __future__ import annotations

import math

import numpy as np

from core.privacy import Noise
from core.spatial.release import Release

DEFAULT_SIZES = (0.02, 0.06, 0.10)
DEFAULT_SMOOTHING = 20.0


def prefix_sums(raster: np.ndarray) -> np.ndarray:
    """P (ny+1, nx+1) with P[i, j] = sum of raster[:i, :j]; int64 for counts, float64 otherwise."""
    raster = np.asarray(raster)
    dtype = np.int64 if np.issubdtype(raster.dtype, np.integer) else np.float64
    P = np.zeros((raster.shape[0] + 1, raster.shape[1] + 1), dtype=dtype)
    np.cumsum(np.cumsum(raster, axis=0, dtype=dtype), axis=1, out=P[1:, 1:])
    return P


def answer(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Sum over each query rectangle from a summed-area table, vectorised over queries."""
    Q = np.asarray(Q, dtype=np.int64).reshape(-1, 4)
    r0, r1, c0, c1 = Q[:, 0], Q[:, 1], Q[:, 2], Q[:, 3]
    return P[r1, c1] - P[r0, c1] - P[r1, c0] + P[r0, c0]


def release_prefix_sums(release: Release, ny: int, nx: int) -> np.ndarray:
    """Summed-area table of the release's density raster (cache it per release)."""
    return prefix_sums(release.density_raster(ny, nx))


def query_shape(
    fraction: float, ny: int, nx: int, aspect: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Width w and height hq in cells for area fraction f and aspect a = w / hq (§5.1)."""
    area = fraction * ny * nx
    w = np.clip(np.rint(np.sqrt(area * aspect)), 1, nx).astype(np.int64)
    hq = np.clip(np.rint(np.sqrt(area / aspect)), 1, ny).astype(np.int64)
    return w, hq


def random_queries(
    ny: int,
    nx: int,
    fraction: float,
    n: int,
    noise: Noise,
    shape: str = "random",
    placement: str = "inside",
) -> np.ndarray:
    """n random rectangles covering about `fraction` of the domain (data-independent).

    shape "random": aspect w/h log-uniform on [1/2, 2]; "square": a = 1. Placement "inside":
    the corner is uniform over all positions that keep the query inside the domain, so the
    centre is uniform over the feasible centres; "clip": centre uniform over the domain, then
    clipped to it (area varies).
    """
    if not 0 < fraction <= 1:
        raise ValueError(f"query area fraction must be in (0, 1], got {fraction}")
    if shape == "random":
        aspect = np.exp(math.log(0.5) + noise.uniform(n) * (math.log(2.0) - math.log(0.5)))
    elif shape == "square":
        aspect = np.ones(n)
    else:
        raise ValueError(f"shape must be 'random' or 'square', got {shape!r}")
    w, hq = query_shape(fraction, ny, nx, aspect)
    if placement == "inside":
        r0 = noise.integers(ny - hq + 1)
        c0 = noise.integers(nx - w + 1)
        return np.stack([r0, r0 + hq, c0, c0 + w], axis=1).astype(np.int64)
    if placement == "clip":
        cy = noise.uniform(n) * ny
        cx = noise.uniform(n) * nx
        r0 = np.clip(np.rint(cy - hq / 2), 0, ny - 1).astype(np.int64)
        c0 = np.clip(np.rint(cx - w / 2), 0, nx - 1).astype(np.int64)
        r1 = np.clip(np.rint(cy + hq / 2), r0 + 1, ny).astype(np.int64)
        c1 = np.clip(np.rint(cx + w / 2), c0 + 1, nx).astype(np.int64)
        return np.stack([r0, r1, c0, c1], axis=1)
    raise ValueError(f"placement must be 'inside' or 'clip', got {placement!r}")


def relative_errors(
    q_hat: np.ndarray, q: np.ndarray, smoothing: float = DEFAULT_SMOOTHING
) -> np.ndarray:
    """RE = |q_hat - q| / max(q, s). q_hat is never clipped, rounded or cast first (§5.2)."""
    q_hat = np.asarray(q_hat, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    return np.abs(q_hat - q) / np.maximum(q, smoothing)


def mean_relative_error(q_hat, q, smoothing: float = DEFAULT_SMOOTHING) -> float:
    return float(relative_errors(q_hat, q, smoothing).mean())


def geo_to_cells(
    box: tuple[float, float, float, float],
    bbox: tuple[float, float, float, float],
    ny: int,
    nx: int,
) -> tuple[int, int, int, int]:
    """A (minlon, minlat, maxlon, maxlat) query box snapped to the nearest cell boundaries (§4)."""
    x0, y0, x1, y1 = bbox
    qx0, qy0, qx1, qy1 = box
    width = x1 - x0
    if x0 > x1:  # the bbox crosses the antimeridian: longitudes east of 180° read as 180 + ...
        width += 360.0
        qx0, qx1 = (q + 360.0 if q < x0 else q for q in (qx0, qx1))
    c0 = int(np.clip(round((qx0 - x0) / width * nx), 0, nx - 1))
    c1 = int(np.clip(round((qx1 - x0) / width * nx), c0 + 1, nx))
    r0 = int(np.clip(round((qy0 - y0) / (y1 - y0) * ny), 0, ny - 1))
    r1 = int(np.clip(round((qy1 - y0) / (y1 - y0) * ny), r0 + 1, ny))
    return r0, r1, c0, c1
