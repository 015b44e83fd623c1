"""What every spatial method returns: a partition of the grid into leaves with noisy counts.

Shared by HTF and all baselines, the MRE evaluator, the map and the exports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from core.privacy import Accountant, Cost, Mechanism
from core.spatial.unit import POINT, Unit


@dataclass
class Release:
    """A DP spatial histogram.

    `leaves`: int64 array (k, 4) of half-open cell rectangles (r0, r1, c0, c1) tiling the grid;
    `values`: float64 array (k,) of noisy counts (negatives kept — clip only for display);
    `epsilon`: the budget breakdown, e.g. {"total", "height", "partition", "data"} for HTF,
    whose parts add up to "total"; `mechanisms`: every mechanism that drew noise for it (the
    accountant's list, in the order of their first draws); `planned`: mechanisms the build
    declared for in-place replacement (HTF's deeper levels; see `charge_rows`); `unit`: whom the
    release protects; `params`: the method's parameters; `info`: public by-products worth
    showing (e.g. HTF's height).
    """

    method: str
    leaves: np.ndarray
    values: np.ndarray
    epsilon: dict[str, float]
    mechanisms: tuple[Mechanism, ...]
    params: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    planned: tuple[Mechanism, ...] = ()
    unit: Unit = POINT

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


def charge_rows(release: Release) -> list[dict]:
    """One row per mechanism that drew: its `to_json()` plus the share of the release's cost it
    accounts for (`charged_epsilon`, `charged_delta`), so the rows add up to the cost exactly.

    The share is what the mechanism's first draw added under the accountant's rules (replayed on
    a fresh, unlimited `Accountant`): its own cost, or for a mechanism drawn `in_place_of`
    planned ones the cost of those it consumed first; a second object of the same parallel
    level adds nothing. This is what a registry row needs while the registry adds plain ε."""
    replay = Accountant(noise=None)  # type: ignore[arg-type]  # nothing is drawn
    replay.plan(release.planned)
    rows = []
    for m in release.mechanisms:
        before = replay.spent
        with replay.drawing(m):
            pass
        after = replay.spent
        row = m.to_json()
        row["charged_epsilon"] = max(0.0, after.epsilon - before.epsilon)
        row["charged_delta"] = max(0.0, after.delta - before.delta)
        rows.append(row)
    return rows


def release_cost(release: Release) -> Cost:
    """The composed cost of the mechanisms that drew (replacements counted as in the accountant)."""
    replay = Accountant(noise=None)  # type: ignore[arg-type]
    replay.plan(release.planned)
    for m in release.mechanisms:
        with replay.drawing(m):
            pass
    return replay.spent


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


def mechanism_table(release: Release) -> list[dict]:
    """One display row per mechanism that drew: what it measured, its kind, its share of the
    release's ε, its sensitivity and the scale of its noise (pages and reports)."""
    return [
        {
            "mechanism": r["label"],
            "kind": r["kind"],
            "ε (share of the release)": r["charged_epsilon"],
            "ε (own)": r["epsilon"],
            "sensitivity": r["sensitivity"],
            "noise scale": r["scale"],
            "in place of": ", ".join(r["in_place_of"]),
        }
        for r in charge_rows(release)
    ]
