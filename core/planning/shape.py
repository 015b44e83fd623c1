"""Synthetic point sets of a known shape, on which the location planner simulates releases.

Two bases, both public or DP:

- `PilotShape` — the shape a charged pilot saw (`core.planning.pilot`). Each draw places the
  pilot's noisy total of points by the pilot's leaves (their noisy counts; a leaf below two
  noise scales counts as empty)
  and, inside each leaf, by a random multiplicative cascade: mass splits between quadrants
  with shares resampled from how the pilot's own reliable nodes split, continued down to the
  grid cells. Below the pilot's resolution the data is assumed to be as clumpy as above it
  (self-similar), which keeps a cluster a pilot sees only coarsely from being simulated as a
  flat block; a pilot with no reliable split falls back to uniform leaves. That is the
  SMOOTH placement, behind the predicted low and mid. The ROUGH placement, behind the predicted
  high, is the roughest data the pilot cannot tell apart from what it saw
  (`PilotShape.draw_rough`): sparse leaves empty, and the rest of each leaf's points along one
  line across it.
- `DeclaredShape` — a size the owner declares public and a shape: `uniform` over the box, or
  `city` (five Gaussian clusters of widths 20/50/100 cells at random centres, Dirichlet
  weights, 5 % background — the paper's synthetic city), each draw placing the clusters anew.

Every draw is a frequency matrix of the release grid's shape. Nothing here reads data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from core.errors import InputError
from core.planning.pilot import Pilot, quadrant_splits
from core.spatial.release import paint
from core.spatial.synthetic import mixture_points, to_matrix

MAX_DECLARED_POINTS = 100_000_000
# A pilot leaf whose noisy count is below 2 noise scales is simulated as empty: clipping the
# noise at 0 alone would spread its positive part as a fake background over empty land (about
# a noise scale per leaf), which fills the gaps that make real releases err.
EMPTY = 2.0


class Placement(StrEnum):
    """How a draw places points below the basis's resolution (see the module docstring)."""

    SMOOTH = "smooth"
    ROUGH = "rough"


class ShapeKind(StrEnum):
    UNIFORM = "uniform"
    CITY = "city"


@dataclass(frozen=True)
class DeclaredShape:
    """A public size and shape declared by the data owner (no pilot, nothing charged)."""

    n: int
    kind: ShapeKind
    rows: int
    cols: int

    def __post_init__(self):
        if not 10 <= int(self.n) <= MAX_DECLARED_POINTS:
            raise InputError(
                f"--public-n must be 10 to {MAX_DECLARED_POINTS:,} points, got {self.n}."
            )

    # A declared shape is the owner's whole claim about the data: there is nothing below a
    # resolution to be rough about, so every draw is of the declared shape.
    placements = (Placement.SMOOTH,)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.cols)

    def draw(self, rng: np.random.Generator, placement: Placement = Placement.SMOOTH) -> np.ndarray:
        if self.kind is ShapeKind.UNIFORM:
            cells = self.rows * self.cols
            return _scatter(rng, int(self.n), np.full(cells, 1.0 / cells), self.shape)
        x, y = mixture_points(int(self.n), rng, ny=self.rows, nx=self.cols)
        return to_matrix(x, y, self.rows, self.cols)

    def basis(self) -> str:
        how = (
            "spread uniformly over the box"
            if self.kind is ShapeKind.UNIFORM
            else "in five clusters with a 5 % background, placed anew in every draw"
        )
        return (
            f"a declared public size of {self.n:,} points {how} (the owner's declaration; "
            "no data was read and nothing was charged)"
        )


@dataclass(frozen=True)
class PilotShape:
    """The noisy shape of a charged pilot (see the module docstring)."""

    pilot: Pilot
    splits: np.ndarray = field(init=False, repr=False)
    placements = (Placement.SMOOTH, Placement.ROUGH)

    def __post_init__(self):
        object.__setattr__(self, "splits", quadrant_splits(self.pilot))

    @property
    def shape(self) -> tuple[int, int]:
        return self.pilot.shape

    @property
    def n(self) -> int:
        return int(round(self.pilot.noisy_n))

    def draw(self, rng: np.random.Generator, placement: Placement = Placement.SMOOTH) -> np.ndarray:
        if placement is Placement.ROUGH:
            return self.draw_rough(rng)
        leaves = self.pilot.leaves
        values = np.where(
            self.pilot.values >= EMPTY * self.pilot.leaf_scale, self.pilot.values, 0.0
        )
        if values.sum() <= 0:
            values = np.ones_like(values)
        weights = self.splits if len(self.splits) else np.full((1, 4), 0.25)
        field_ = (cascade(self.shape, weights, rng) + 1e-12).ravel()
        within = np.bincount(self._leaf_of, weights=field_, minlength=len(leaves))
        density = (values / within)[self._leaf_of] * field_
        return _scatter(rng, self.n, density / density.sum(), self.shape)

    @property
    def noise_floor(self) -> float:
        """The noisy count below which the rough placement treats a leaf as empty: the level the
        largest of the pilot's k leaf noises stays under when every leaf is empty (Laplace of
        scale b: P(noise > b ln k) = 1/(2k), so about one empty leaf in two pilots passes it),
        and never below the smooth placement's 2 scales."""
        k = max(len(self.pilot.leaves), 2)
        return max(EMPTY, math.log(k)) * self.pilot.leaf_scale

    def draw_rough(self, rng: np.random.Generator) -> np.ndarray:
        """The roughest point set the pilot cannot tell apart from what it saw.

        Why. Range-query MRE is dominated by queries whose true answer is near zero (their
        error is divided by the smoothing, not by the answer), so it rises with the share of
        empty land. A pilot sees neither whether a sparse leaf is empty — its noisy count is
        as likely to be noise as data — nor how a leaf's points lie inside it. Place data lies
        on lines and in dots (roads, rivers, coasts, towns, GPS tracks) with empty land between
        them, which a smooth placement fills. This placement takes the other reading of the
        same pilot, at both scales:

        - a leaf whose noisy count is below `noise_floor` (what pure noise reaches on one of
          the pilot's leaves) is empty; the noisy total is kept, on the other leaves;
        - inside every other leaf the points lie along one straight line crossing the leaf
          (random centre and direction, one cell wide): the simplest one-dimensional
          structure, so most of a large leaf is empty land.

        Post-processing of the pilot's released values only; reads no data, costs no ε."""
        p = self.pilot
        values = np.where(p.values >= self.noise_floor, p.values, 0.0)
        if values.sum() <= 0:  # nothing stands out of the noise: fall back to the smooth rule
            values = np.where(p.values >= EMPTY * p.leaf_scale, p.values, 0.0)
        if values.sum() <= 0:
            values = np.ones_like(values)
        counts = rng.multinomial(self.n, values / values.sum())
        return _along_lines(rng, p.leaves.astype(np.float64), counts, self.shape)

    @property
    def _leaf_of(self) -> np.ndarray:
        """The pilot leaf of every cell (row-major), summed per leaf without cancellation."""
        ids = getattr(self, "_ids", None)
        if ids is None:
            ny, nx = self.shape
            ids = np.rint(
                paint(self.pilot.leaves, np.arange(len(self.pilot.leaves), dtype=float), ny, nx)
            )
            ids = ids.astype(np.int64).ravel()
            object.__setattr__(self, "_ids", ids)
        return ids

    def basis(self) -> str:
        fine = (
            f"inside its leaves the points are as clumpy as the {len(self.splits)} reliable "
            "splits the pilot resolved"
            if len(self.splits)
            else "inside its leaves the points are spread evenly (the pilot resolved no split)"
        )
        return (
            f"{self.pilot.describe()}; {fine}; the high end of the range assumes instead that "
            "leaves within the pilot's noise are empty and the rest lie along lines"
        )


Shape = PilotShape | DeclaredShape


def cascade(shape: tuple[int, int], weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random multiplicative cascade on a (2^L)-sided square cropped to `shape`: at every
    level each node's mass is shared by its four quadrants with a row of `weights` (rows sum to
    1) in a random order; the field has mean 1 per cell."""
    ny, nx = shape
    levels = int(math.ceil(math.log2(max(ny, nx, 1))))
    field_ = np.ones((1, 1))
    w = np.asarray(weights, dtype=np.float64)
    for _ in range(levels):
        n = field_.shape[0]
        rows = w[rng.integers(len(w), size=n * n)]
        order = np.argsort(rng.random((n * n, 4)), axis=1)
        rows = np.take_along_axis(rows, order, axis=1) * 4.0
        block = rows.reshape(n, n, 2, 2).transpose(0, 2, 1, 3).reshape(2 * n, 2 * n)
        field_ = np.repeat(np.repeat(field_, 2, axis=0), 2, axis=1) * block
    return field_[:ny, :nx]


def _along_lines(rng, leaves: np.ndarray, counts: np.ndarray, shape) -> np.ndarray:
    """counts[i] points on one random straight line across leaf i (rows r0..r1, cols c0..c1):
    a uniform centre in the leaf, a uniform direction, the chord clipped to the leaf."""
    ny, nx = shape
    r0, r1, c0, c1 = leaves.T
    cy, cx = rng.uniform(r0, r1), rng.uniform(c0, c1)
    angle = rng.uniform(0.0, math.pi, len(leaves))
    dy, dx = np.sin(angle) + 1e-9, np.cos(angle) + 1e-9

    def span(lo, hi, c, d):
        a, b = (lo - c) / d, (hi - c) / d
        return np.minimum(a, b), np.maximum(a, b)

    (ay, by), (ax, bx) = span(r0, r1, cy, dy), span(c0, c1, cx, dx)
    leaf = np.repeat(np.arange(len(leaves)), counts)
    t = rng.uniform(np.maximum(ay, ax)[leaf], np.minimum(by, bx)[leaf])
    y = np.clip(cy[leaf] + t * dy[leaf], r0[leaf], r1[leaf] - 1e-6).astype(np.int64)
    x = np.clip(cx[leaf] + t * dx[leaf], c0[leaf], c1[leaf] - 1e-6).astype(np.int64)
    return np.bincount(y * nx + x, minlength=ny * nx).astype(np.int64).reshape(shape)


def _scatter(rng: np.random.Generator, n: int, p: np.ndarray, shape) -> np.ndarray:
    """n points placed independently on the cells with probabilities p (a frequency matrix)."""
    cells = rng.choice(p.size, size=int(n), p=p)
    return np.bincount(cells, minlength=p.size).astype(np.int64).reshape(shape)
