"""Vectorised geometry on half-open cell rectangles (r0, r1, c0, c1) (spec htf.md §1.4).

Every baseline works on whole arrays of rectangles at once: counts come from the int64
summed-area table, children from index arithmetic, so no method loops over nodes in Python.
"""

from __future__ import annotations

import numpy as np


def summed_area(F: np.ndarray) -> np.ndarray:
    """P (ny+1, nx+1) int64 with P[i, j] = sum of F[:i, :j]."""
    P = np.zeros((F.shape[0] + 1, F.shape[1] + 1), dtype=np.int64)
    np.cumsum(np.cumsum(F, axis=0, dtype=np.int64), axis=1, out=P[1:, 1:])
    return P


def rect_counts(P: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """Exact int64 count of every rectangle, O(1) each."""
    r0, r1, c0, c1 = rects[:, 0], rects[:, 1], rects[:, 2], rects[:, 3]
    return P[r1, c1] - P[r0, c1] - P[r1, c0] + P[r0, c0]


def grid_rects(row_edges: np.ndarray, col_edges: np.ndarray) -> np.ndarray:
    """The cells of a (len(row_edges)-1) x (len(col_edges)-1) grid, row-major."""
    re = np.asarray(row_edges, dtype=np.int64)
    ce = np.asarray(col_edges, dtype=np.int64)
    my, mx = len(re) - 1, len(ce) - 1
    out = np.empty((my * mx, 4), dtype=np.int64)
    out[:, 0] = np.repeat(re[:-1], mx)
    out[:, 1] = np.repeat(re[1:], mx)
    out[:, 2] = np.tile(ce[:-1], my)
    out[:, 3] = np.tile(ce[1:], my)
    return out


def segment_index(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For segments of the given sizes laid end to end: (segment of each item, position within it)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    seg = np.repeat(np.arange(len(sizes)), sizes)
    starts = np.cumsum(sizes) - sizes
    return seg, np.arange(int(sizes.sum()), dtype=np.int64) - starts[seg]


def subgrid_rects(
    parents: np.ndarray, m_rows: np.ndarray, m_cols: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Cut each parent into m_rows x m_cols near-equal sub-cells (spec §3.1 edges).

    Returns the sub-cells (row-major inside each parent, parents in order) and each one's parent index.
    """
    m_rows = np.asarray(m_rows, dtype=np.int64)
    m_cols = np.asarray(m_cols, dtype=np.int64)
    parent, t = segment_index(m_rows * m_cols)
    my, mx = m_rows[parent], m_cols[parent]
    j, k = t // mx, t % mx
    r0, r1, c0, c1 = (parents[parent, i] for i in range(4))
    n_r, n_c = r1 - r0, c1 - c0
    out = np.empty((len(parent), 4), dtype=np.int64)
    out[:, 0] = r0 + (2 * j * n_r + my) // (2 * my)
    out[:, 1] = r0 + (2 * (j + 1) * n_r + my) // (2 * my)
    out[:, 2] = c0 + (2 * k * n_c + mx) // (2 * mx)
    out[:, 3] = c0 + (2 * (k + 1) * n_c + mx) // (2 * mx)
    return out, parent


def quad_children(rects: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """QuadTree split (spec §3.6): cut at r0 + (r1-r0)//2 and c0 + (c1-c0)//2.

    Four children, two if one extent is 1, none for a 1 x 1 node. Returns (children, parent index).
    """
    r0, r1, c0, c1 = rects[:, 0], rects[:, 1], rects[:, 2], rects[:, 3]
    split_r = (r1 - r0) >= 2
    split_c = (c1 - c0) >= 2
    if split_r.all() and split_c.all():
        return _quarters(rects)
    n_child = (1 + split_r) * (1 + split_c)
    n_child[~(split_r | split_c)] = 0
    parent, t = segment_index(n_child)
    sr, sc = split_r[parent], split_c[parent]
    a = np.where(sc, t // 2, t)  # row part
    b = np.where(sc, t % 2, 0)  # column part
    pr0, pr1, pc0, pc1 = r0[parent], r1[parent], c0[parent], c1[parent]
    mr = pr0 + (pr1 - pr0) // 2
    mc = pc0 + (pc1 - pc0) // 2
    out = np.empty((len(parent), 4), dtype=np.int64)
    out[:, 0] = np.where(sr & (a == 1), mr, pr0)
    out[:, 1] = np.where(sr & (a == 0), mr, pr1)
    out[:, 2] = np.where(sc & (b == 1), mc, pc0)
    out[:, 3] = np.where(sc & (b == 0), mc, pc1)
    return out, parent


def _quarters(rects: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Fast path of `quad_children` when every node splits both ways (power-of-two grids)."""
    r0, r1, c0, c1 = rects[:, 0], rects[:, 1], rects[:, 2], rects[:, 3]
    mr = r0 + (r1 - r0) // 2
    mc = c0 + (c1 - c0) // 2
    out = np.empty((len(rects), 4, 4), dtype=np.int64)
    out[:, :, 0] = np.stack([r0, r0, mr, mr], axis=1)
    out[:, :, 1] = np.stack([mr, mr, r1, r1], axis=1)
    out[:, :, 2] = np.stack([c0, mc, c0, mc], axis=1)
    out[:, :, 3] = np.stack([mc, c1, mc, c1], axis=1)
    return out.reshape(-1, 4), np.repeat(np.arange(len(rects), dtype=np.int64), 4)


def coverage(leaves: np.ndarray, ny: int, nx: int) -> np.ndarray:
    """How many leaves cover each cell (all ones for a partition), via a 2-D difference array."""
    D = np.zeros((ny + 1, nx + 1), dtype=np.int64)
    L = np.asarray(leaves, dtype=np.int64).reshape(-1, 4)
    np.add.at(D, (L[:, 0], L[:, 2]), 1)
    np.add.at(D, (L[:, 1], L[:, 3]), 1)
    np.add.at(D, (L[:, 0], L[:, 3]), -1)
    np.add.at(D, (L[:, 1], L[:, 2]), -1)
    return np.cumsum(np.cumsum(D, axis=0), axis=1)[:ny, :nx]
