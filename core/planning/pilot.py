"""The location planner's pilot: a small charged DP view of the data's shape.

A location histogram's error depends on where the points are, which is private. The planner
therefore rests on a pilot — its own governed release, charged to the dataset like any other
and recorded in the registry — from which it simulates releases on synthetic point sets of the
same noisy shape (`core.planning.shape`).

The pilot is a PrivTree histogram (Zhang, Xiao, Xie 2016) at the pilot's ε: noisy counts of
coarse cells that are split adaptively where the data is dense, so a small ε still resolves
the dense parts. It is built by the project's own PrivTree builder through the release's
accountant (its mechanisms: PrivTree's structure `Laplace` and its leaf counts'
`DiscreteLaplace`), so what is charged is what drew. Everything the planner derives from it —
the noisy size, the leaves' shares, how mass splits between quadrants where the counts are
reliable — is post-processing of that release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, Cost
from core.spatial.baselines.privtree import build_privtree
from core.spatial.baselines.rectangles import quad_children
from core.spatial.queries import answer, prefix_sums
from core.spatial.release import paint
from core.spatial.unit import POINT, Unit, unit_from

TOOL = "pilot"  # the registry's tool name for a pilot release
DEFAULT_PILOT_EPSILON = 0.2  # see docs/benchmarks/plan_calibration.md: 0.05 was too coarse
RELIABLE = 8.0  # a node's split is used when its noisy mass is >= 8 noise standard deviations


@dataclass(frozen=True)
class Pilot:
    """A pilot release: PrivTree leaves (r0, r1, c0, c1) on the public grid with their noisy
    counts, at `epsilon`, for `unit`. Released values and public parameters only."""

    rows: int
    cols: int
    bbox: tuple[float, float, float, float] | None
    leaves: np.ndarray  # (k, 4) int64
    values: np.ndarray  # (k,) float64, noisy (negatives kept)
    leaf_scale: float  # the leaf counts' discrete Laplace scale
    epsilon: float
    unit: Unit = POINT
    release_id: int | None = None  # the registry release that holds it, when recorded

    @property
    def noisy_n(self) -> float:
        """The noisy number of points (sum of the leaves' noisy counts, at least 10)."""
        return max(float(np.sum(self.values)), 10.0)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    def describe(self) -> str:
        rid = "" if self.release_id is None else f" (release #{self.release_id})"
        return (
            f"a pilot{rid}: a PrivTree histogram at epsilon {self.epsilon:g} with "
            f"{len(self.leaves)} leaves and a noisy total of {self.noisy_n:,.0f} points"
        )

    def to_json(self) -> dict:
        return {
            "tool": TOOL,
            "rows": self.rows,
            "cols": self.cols,
            "bbox": None if self.bbox is None else list(self.bbox),
            "leaves": self.leaves.astype(int).tolist(),
            "values": [float(v) for v in self.values],
            "leaf_scale": self.leaf_scale,
            "epsilon": self.epsilon,
            "unit": self.unit.to_json(),
            "noisy_n": self.noisy_n,
        }

    @classmethod
    def from_json(cls, data: dict, release_id: int | None = None) -> Pilot:
        unit_json = data.get("unit") or {}
        unit = (
            unit_from(unit_json.get("column"), int(unit_json.get("max_points", 1)))
            if unit_json.get("kind") == "person"
            else POINT
        )
        bbox = data.get("bbox")
        return cls(
            rows=int(data["rows"]),
            cols=int(data["cols"]),
            bbox=None if bbox is None else tuple(float(v) for v in bbox),
            leaves=np.asarray(data["leaves"], dtype=np.int64).reshape(-1, 4),
            values=np.asarray(data["values"], dtype=np.float64),
            leaf_scale=float(data["leaf_scale"]),
            epsilon=float(data["epsilon"]),
            unit=unit,
            release_id=release_id,
        )


def measure_pilot(
    F: np.ndarray,
    epsilon: float,
    accountant: Accountant,
    unit: Unit = POINT,
    bbox: tuple[float, float, float, float] | None = None,
) -> Pilot:
    """Draw the pilot on the frequency matrix F.

    Privacy claim: ε-DP for the unit (a point, or a person with at most K points): PrivTree at
    ε — ε/2 on its structure (one `Laplace`, PrivTree's theorem, sensitivity K(2β-1)/(β-1)) and
    ε/2 on the disjoint leaves' counts (`DiscreteLaplace`, L1 sensitivity K). The accountant
    holds the charge; its mechanisms are exactly those that drew."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"--pilot-epsilon must be a number > 0, got {epsilon}.")
    accountant.require(Cost(float(epsilon)), "the pilot")
    rel = build_privtree(np.asarray(F), float(epsilon), accountant, unit=unit)
    ny, nx = np.asarray(F).shape
    return Pilot(
        rows=int(ny),
        cols=int(nx),
        bbox=bbox,
        leaves=np.asarray(rel.leaves, dtype=np.int64),
        values=np.asarray(rel.values, dtype=np.float64),
        leaf_scale=float(rel.info["count_noise_scale"]),
        epsilon=float(epsilon),
        unit=unit,
    )


def quadrant_splits(pilot: Pilot, reliable: float = RELIABLE) -> np.ndarray:
    """How mass splits between the four quadrants of the pilot's internal nodes, where the
    noisy counts are reliable: an (m, 4) array of shares (rows sum to 1; m may be 0).

    Post-processing of the pilot's leaves: a node's noisy mass is the sum of its leaves' noisy
    counts, whose noise standard deviation is sqrt(2 × leaves) × the leaf scale; only nodes
    whose four children's total is at least `reliable` such deviations are used."""
    ny, nx = pilot.shape
    cells = (pilot.leaves[:, 1] - pilot.leaves[:, 0]) * (pilot.leaves[:, 3] - pilot.leaves[:, 2])
    mass = prefix_sums(paint(pilot.leaves, pilot.values / cells, ny, nx))
    count = prefix_sums(paint(pilot.leaves, 1.0 / cells, ny, nx))
    leafset = {tuple(r) for r in pilot.leaves.tolist()}
    nodes = np.array([[0, ny, 0, nx]], dtype=np.int64)
    shares = []
    while len(nodes):
        inner = np.array([tuple(r) not in leafset for r in nodes.tolist()], dtype=bool)
        nodes = nodes[inner]
        if not len(nodes):
            break
        children, parent = quad_children(nodes)
        m = np.clip(answer(mass, children), 0.0, None)
        k = answer(count, children)
        sizes = np.bincount(parent, minlength=len(nodes))
        total = np.bincount(parent, weights=m, minlength=len(nodes))
        leaves_in = np.bincount(parent, weights=k, minlength=len(nodes))
        sd = np.sqrt(2.0 * np.maximum(leaves_in, 1.0)) * pilot.leaf_scale
        good = (sizes == 4) & (total >= reliable * sd) & (total > 0)
        for i in np.flatnonzero(good):
            part = m[parent == i]
            shares.append(part / part.sum())
        nodes = children
    return np.asarray(shares, dtype=np.float64).reshape(-1, 4)
