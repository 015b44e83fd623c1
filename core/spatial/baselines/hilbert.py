"""The Hilbert curve over a grid, and its aligned dyadic runs as rectangles (used by DAWA).

The curve visits the cells of the enclosing 2^k x 2^k square (k = ceil(log2(max(ny, nx))));
cells outside the ny x nx grid are visited too and masked out, so the aligned runs of the curve
stay whole squares and 2:1 rectangles of the square, clipped to the grid. An aligned run of
length 4^m (start a multiple of 4^m) is one quadtree block of side 2^m; an aligned run of length
2 x 4^m is two consecutive sibling blocks, which the curve always leaves edge to edge, so it is a
2^m x 2^(m+1) (or 2^(m+1) x 2^m) rectangle. All public geometry: nothing here reads data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def curve_order(side: int) -> int:
    """k with 2^k >= side (the order of the enclosing Hilbert square)."""
    return max(0, math.ceil(math.log2(max(1, int(side)))))


def position_to_cell(k: int, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of curve positions `d` on the 2^k x 2^k Hilbert curve (vectorised).

    The classic iterative construction: at scale s = 1, 2, 4, ... the two bits of d for that
    scale pick a quadrant; the partial coordinates are rotated/reflected into it, then shifted.
    """
    t = np.asarray(d, dtype=np.int64).copy()
    x = np.zeros_like(t)
    y = np.zeros_like(t)
    s = 1
    for _ in range(k):
        rx = (t // 2) & 1
        ry = (t ^ rx) & 1
        flip = (ry == 0) & (rx == 1)
        x = np.where(flip, s - 1 - x, x)
        y = np.where(flip, s - 1 - y, y)
        swap = ry == 0
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        x = x + s * rx
        y = y + s * ry
        t //= 4
        s *= 2
    return y, x


@dataclass(frozen=True)
class HilbertLayout:
    """The grid's cells in Hilbert order. `rows[p]`, `cols[p]`: the cell at curve position p of
    the enclosing square; `inside[p]`: whether that cell is in the ny x nx grid."""

    ny: int
    nx: int
    order: int
    rows: np.ndarray
    cols: np.ndarray
    inside: np.ndarray

    @classmethod
    def for_grid(cls, ny: int, nx: int) -> HilbertLayout:
        k = curve_order(max(ny, nx))
        rows, cols = position_to_cell(k, np.arange(4**k, dtype=np.int64))
        return cls(ny, nx, k, rows, cols, (rows < ny) & (cols < nx))

    @property
    def length(self) -> int:
        return 4**self.order

    def to_curve(self, F: np.ndarray) -> np.ndarray:
        """F's counts along the curve (0 at positions outside the grid)."""
        out = np.zeros(self.length, dtype=np.int64)
        out[self.inside] = np.asarray(F, dtype=np.int64)[
            self.rows[self.inside], self.cols[self.inside]
        ]
        return out

    def run_rects(self, start: np.ndarray, level: np.ndarray) -> np.ndarray:
        """Rectangles (r0, r1, c0, c1), clipped to the grid, of the aligned runs
        [start, start + 2^level) (start a multiple of 2^level). A run wholly outside the grid
        gives an empty rectangle (r0 == r1 or c0 == c1)."""
        start = np.asarray(start, dtype=np.int64)
        level = np.asarray(level, dtype=np.int64)
        m = level // 2  # the run is one or two blocks of side 2^m
        side = np.left_shift(1, m)
        r_a, c_a = self.rows[start], self.cols[start]
        r0, c0 = (r_a // side) * side, (c_a // side) * side
        second = np.minimum(start + np.left_shift(1, 2 * m), self.length - 1)
        two = (level % 2) == 1
        r_b = np.where(two, (self.rows[second] // side) * side, r0)
        c_b = np.where(two, (self.cols[second] // side) * side, c0)
        out = np.empty((len(start), 4), dtype=np.int64)
        out[:, 0] = np.minimum(np.minimum(r0, r_b), self.ny)
        out[:, 1] = np.minimum(np.maximum(r0, r_b) + side, self.ny)
        out[:, 2] = np.minimum(np.minimum(c0, c_b), self.nx)
        out[:, 3] = np.minimum(np.maximum(c0, c_b) + side, self.nx)
        return out
