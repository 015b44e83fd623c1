"""What every spatial method returns: a partition of the grid into leaves with noisy counts.

Shared by HTF and all baselines, the MRE evaluator, the map and the exports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.privacy import BudgetLedger


@dataclass
class Release:
    """A DP spatial histogram.

    `leaves`: int64 array (k, 4) of half-open cell rectangles (r0, r1, c0, c1) tiling the grid;
    `values`: float64 array (k,) of noisy counts (negatives kept — clip only for display);
    `epsilon`: the budget breakdown, e.g. {"total", "height", "partition", "data"} for HTF,
    whose parts add up to "total"; `ledger`: every spend made; `params`: the method's parameters;
    `info`: public by-products worth showing (e.g. HTF's height).
    """

    method: str
    leaves: np.ndarray
    values: np.ndarray
    epsilon: dict[str, float]
    ledger: BudgetLedger
    params: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    @property
    def n_leaves(self) -> int:
        return int(len(self.leaves))

    def cells_per_leaf(self) -> np.ndarray:
        L = self.leaves
        return (L[:, 1] - L[:, 0]) * (L[:, 3] - L[:, 2])

    def density_raster(self, ny: int, nx: int) -> np.ndarray:
        """Per-cell estimate under the uniformity assumption: leaf value spread evenly over its cells.

        Vectorised (spec §4): +d/-d on the four corners of each leaf in a (ny+1, nx+1) difference
        array, then two cumulative sums — O(#leaves + cells), fast for 1M identity leaves.
        """
        return paint(self.leaves, self.values / self.cells_per_leaf(), ny, nx)


def paint(leaves: np.ndarray, per_cell: np.ndarray, ny: int, nx: int) -> np.ndarray:
    """Raster (ny, nx) holding `per_cell[k]` on every cell of leaf k (leaves must not overlap)."""
    L = np.asarray(leaves, dtype=np.int64).reshape(-1, 4)
    d = np.asarray(per_cell, dtype=np.float64)
    w = nx + 1
    r0, r1, c0, c1 = L[:, 0], L[:, 1], L[:, 2], L[:, 3]
    idx = np.concatenate([r0 * w + c0, r1 * w + c1, r0 * w + c1, r1 * w + c0])
    wts = np.concatenate([d, d, -d, -d])
    diff = np.bincount(idx, weights=wts, minlength=(ny + 1) * w).astype(np.float64)
    diff = diff.reshape(ny + 1, nx + 1)
    np.cumsum(diff, axis=0, out=diff)
    np.cumsum(diff, axis=1, out=diff)
    return diff[:ny, :nx]
