"""The mechanisms every tool draws its noise through, as typed, frozen objects.

One object per noisy statistic states everything a reader of the release needs: what it
measures (`label`), its privacy cost (`cost`: (ε, δ); PP's randomization states (ρ1, ρ2)
instead), its `sensitivity`, the `scale` of the noise it adds, and its accuracy from public
parameters (`half_width`, `survival`, `retention`). The same object draws the noise
(`draw(accountant, ...)`), and the draw records the object on the accountant, so the charge a
registry keeps is read off the very objects that set the noise scales: there is no separate
"spend" call beside a draw (see `core.privacy.accountant`).

The family is closed: integer (discrete) Laplace, float Laplace, Laplace on a lattice (reals
rounded to a fine grid, noised with integer draws), the discrete Gaussian
(`core.privacy.gaussian`), the exponential mechanism, noisy-threshold partition selection and
PP's per-sub-table randomization. Tools compose these objects (a DP SQL
aggregate holds a `DiscreteLaplace`), they do not subclass them, so a registry can read every
recorded row back into its object (`core.privacy.recorded.from_json`) without importing a tool.
Costs live in `core.privacy.cost`, PP's randomization in `core.privacy.pp_randomization`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, fields
from enum import StrEnum
from fractions import Fraction
from typing import Any, ClassVar, Protocol

import numpy as np

from core.privacy.accuracy import (
    discrete_laplace_half_width,
    discrete_laplace_tail,
    laplace_half_width,
)
from core.privacy.cost import Cost
from core.privacy.noise import Noise, round_to_lattice


class Accountant(Protocol):
    """What a mechanism needs of `core.privacy.accountant.Accountant` to draw: record itself,
    then receive the noise source for the draw."""

    def drawing(self, mechanism: Mechanism) -> AbstractContextManager[Noise]: ...

    def _record(self, mechanism: Mechanism) -> None: ...


class LossKind(StrEnum):
    """The shape of a mechanism's privacy loss, as an accountant reads it."""

    LAPLACE = "laplace"  # continuous Laplace noise of `scale` on a statistic of L1 `sensitivity`
    DISCRETE_LAPLACE = "discrete laplace"  # integer Laplace noise (in units of the lattice)
    PURE = "pure"  # some other ε-DP mechanism (the exponential mechanism, a recorded ε row)
    APPROXIMATE = "approximate"  # an (ε, δ)-DP claim with δ > 0 (noisy-threshold selection)
    # discrete Gaussian noise of `scale` σ on integer statistics of L2 `sensitivity` Δ2:
    # ρ-zCDP with ρ = Δ2²/(2σ²), and the (ε, δ) claim its calibration verified
    GAUSSIAN = "gaussian"
    NONE = "none"  # no (ε, δ) loss: PP's randomization, whose (ρ1, ρ2) claim stays its own


@dataclass(frozen=True)
class PrivacyLoss:
    """A mechanism's privacy loss profile: what an accountant composes (`core.privacy.
    accounting`). `epsilon`, `delta` are its (ε, δ)-DP claim (the same as its `cost`);
    `sensitivity` and `scale` describe the noise for the Laplace kinds (for a lattice mechanism
    both are in lattice steps; None where the notion does not apply) and, for the Gaussian
    kind, its L2 sensitivity and σ (`rho`).

    Every profile with ε > 0 is at least an ε-DP (δ = 0) or (ε, δ)-DP claim, and the accountant
    relies on that claim alone (see `core.privacy.accounting`), so a profile is never read as
    more than its mechanism states."""

    kind: LossKind
    epsilon: float
    delta: float = 0.0
    sensitivity: float | None = None
    scale: float | None = None

    def __post_init__(self):
        Cost(self.epsilon, self.delta)  # finite, >= 0, delta < 1
        if self.kind is LossKind.NONE and (self.epsilon or self.delta):
            raise ValueError("a NONE loss has epsilon = delta = 0")
        if self.kind is LossKind.APPROXIMATE and not self.delta > 0:
            raise ValueError("an APPROXIMATE loss has delta > 0")
        if self.kind in (LossKind.LAPLACE, LossKind.DISCRETE_LAPLACE, LossKind.PURE) and (
            self.delta or not self.epsilon > 0
        ):
            raise ValueError(f"a {self.kind.value} loss is pure: epsilon > 0, delta = 0")
        if self.kind is LossKind.GAUSSIAN and not (
            self.epsilon > 0
            and self.delta > 0
            and self.sensitivity is not None
            and self.scale is not None
            and math.isfinite(self.sensitivity)
            and self.sensitivity >= 0
            and self.scale > 0
        ):
            raise ValueError("a gaussian loss has epsilon, delta > 0, an L2 sensitivity and σ > 0")

    @property
    def rho(self) -> float | None:
        """The zCDP ρ = Δ2²/(2σ²) of a Gaussian loss (None for the other kinds)."""
        if self.kind is not LossKind.GAUSSIAN:
            return None
        return float(self.sensitivity) ** 2 / (2.0 * float(self.scale) ** 2)

    @classmethod
    def of_cost(cls, cost: Cost) -> PrivacyLoss:
        """The profile of a bare (ε, δ) claim (no noise shape known)."""
        if cost.delta > 0:
            return cls(LossKind.APPROXIMATE, cost.epsilon, cost.delta)
        if cost.epsilon > 0:
            return cls(LossKind.PURE, cost.epsilon)
        return cls(LossKind.NONE, 0.0)

    @property
    def cost(self) -> Cost:
        return Cost(self.epsilon, self.delta)


class MechanismKind(StrEnum):
    DISCRETE_LAPLACE = "discrete Laplace"
    LAPLACE = "Laplace"
    LATTICE_LAPLACE = "Laplace on a lattice"
    DISCRETE_GAUSSIAN = "discrete Gaussian"
    EXPONENTIAL = "exponential mechanism"
    THRESHOLD = "noisy-threshold partition selection"
    PP_RANDOMIZATION = "PP randomization"
    RECORDED = "recorded"  # a row kept by an older registry: no draw, no accuracy


def _check_epsilon(epsilon: float, allow_zero: bool = False) -> None:
    ok = epsilon >= 0 if allow_zero else epsilon > 0
    if not (math.isfinite(epsilon) and ok):
        raise ValueError(f"a mechanism needs a finite epsilon > 0, got {epsilon}")


def _check_sensitivity(sensitivity: float) -> None:
    if not (math.isfinite(sensitivity) and sensitivity >= 0):
        raise ValueError(f"sensitivity must be a finite number >= 0, got {sensitivity}")


@dataclass(frozen=True)
class Mechanism(ABC):
    """Base of the family. `label` says what is measured ("ug: grid cell counts").

    `in_place_of` names mechanisms (by label) of the same release that this one replaces on
    disjoint parts of the data — e.g. HTF spends a pruned node's remaining path budget in one
    draw instead of the deeper levels' counts. Such a mechanism adds nothing to the release's
    cost, and the accountant checks that its ε is at most the sum of those it replaces.
    """

    KIND: ClassVar[MechanismKind]
    label: str
    in_place_of: tuple[str, ...] = field(default=(), kw_only=True)

    @property
    def kind(self) -> MechanismKind:
        return self.KIND

    @property
    @abstractmethod
    def cost(self) -> Cost: ...

    def loss(self) -> PrivacyLoss:
        """This mechanism's privacy loss profile (an accountant composes these). By default
        the profile of its (ε, δ) cost; members with a known noise shape say more."""
        return PrivacyLoss.of_cost(self.cost)

    # every member also has `sensitivity` and `scale` (a field or a property; None where the
    # notion does not apply, as for PP's randomization)
    sensitivity: ClassVar
    scale: ClassVar

    def to_json(self) -> dict:
        """The row a registry stores: kind, the object's fields, and the derived cost/scale."""
        out: dict[str, Any] = {"kind": self.kind.value}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = str(value) if isinstance(value, Fraction) else value
        out["in_place_of"] = list(self.in_place_of)
        out["epsilon"], out["delta"] = self.cost.epsilon, self.cost.delta
        out["sensitivity"], out["scale"] = self.sensitivity, self.scale
        return out


# -- additive noise ---------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class _PureDP(Mechanism):
    """A pure ε-DP mechanism whose noise scale is sensitivity / ε (the members below)."""

    sensitivity: float
    epsilon: float

    def __post_init__(self):
        _check_sensitivity(self.sensitivity)
        _check_epsilon(self.epsilon)

    @property
    def cost(self) -> Cost:
        return Cost(self.epsilon)

    @property
    def scale(self) -> float:
        return float(self.sensitivity) / float(self.epsilon)


@dataclass(frozen=True, kw_only=True)
class DiscreteLaplace(_PureDP):
    """Integer counts (or sums in integer units) + discrete Laplace noise.

    Privacy claim: if one unit changes the vector of statistics by at most `sensitivity` in
    L1 norm, adding i.i.d. discrete Laplace noise of scale b = sensitivity / ε to each entry is
    ε-DP (Canonne, Kamath, Steinke 2020). A vector over disjoint parts (the cells of a grid, the
    nodes of one tree level) has L1 sensitivity 1 when a unit adds one point.
    """

    KIND: ClassVar[MechanismKind] = MechanismKind.DISCRETE_LAPLACE

    def loss(self) -> PrivacyLoss:
        """Discrete Laplace (P(k) ∝ exp(-|k|/b)) on integer statistics of L1 sensitivity Δ:
        privacy loss at most Δ/b = ε (exactly ±ε when Δ = 1)."""
        return PrivacyLoss(
            LossKind.DISCRETE_LAPLACE, self.epsilon, 0.0, float(self.sensitivity), self.scale
        )

    def draw(self, accountant: Accountant, values) -> np.ndarray:
        """`values` (integers) plus discrete Laplace noise; int64 array of the same shape."""
        arr = np.asarray(values)
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"{self.label}: discrete Laplace adds to integers, got {arr.dtype}")
        with accountant.drawing(self) as noise:
            z = noise.discrete_laplace(self.scale, size=arr.shape)
        return arr.astype(np.int64) + z

    def half_width(self, confidence: float = 0.95) -> int:
        """Smallest integer k with P(|noise| <= k) >= confidence."""
        return discrete_laplace_half_width(self.scale, confidence)

    def tail(self, k: int) -> float:
        """P(|noise| > k)."""
        return discrete_laplace_tail(self.scale, k)


@dataclass(frozen=True, kw_only=True)
class Laplace(_PureDP):
    """Real-valued statistics + continuous Laplace noise of scale sensitivity / ε.

    Privacy claim: ε-DP when one unit moves the statistics by at most `sensitivity` in L1
    (secure mode draws with OpenDP's float sampler, which guards the floating-point attacks).
    """

    KIND: ClassVar[MechanismKind] = MechanismKind.LAPLACE

    def loss(self) -> PrivacyLoss:
        """Laplace of `scale` b on L1 `sensitivity` Δ: privacy loss at most Δ/b = ε."""
        return PrivacyLoss(LossKind.LAPLACE, self.epsilon, 0.0, float(self.sensitivity), self.scale)

    def draw(self, accountant: Accountant, values) -> np.ndarray | float:
        """`values` plus Laplace noise (a float for a scalar, else a float64 array)."""
        arr = np.asarray(values, dtype=np.float64)
        with accountant.drawing(self) as noise:
            if arr.ndim == 0:
                return float(arr) + noise.laplace(self.scale)
            return arr + noise.laplace(self.scale, size=arr.shape)

    def half_width(self, confidence: float = 0.95) -> float:
        return float(laplace_half_width(self.scale, confidence))


@dataclass(frozen=True, kw_only=True)
class LatticeLaplace(_PureDP):
    """Reals rounded to the lattice `lattice`·Z plus lattice-valued discrete Laplace noise.

    Privacy claim: rounding moves a statistic of sensitivity d by at most d + lattice, so the
    noise scale (d + lattice) / ε makes the rounded statistic ε-DP; `sensitivity` here is the
    rounded one (d + lattice). Integer draws: exact, and free of floating-point attacks.
    """

    KIND: ClassVar[MechanismKind] = MechanismKind.LATTICE_LAPLACE
    lattice: float = 2.0**-10

    def loss(self) -> PrivacyLoss:
        """Discrete Laplace on the lattice: sensitivity and scale in lattice steps (their
        ratio is ε)."""
        return PrivacyLoss(
            LossKind.DISCRETE_LAPLACE,
            self.epsilon,
            0.0,
            float(self.sensitivity) / self.lattice,
            self.scale / self.lattice,
        )

    def __post_init__(self):
        super().__post_init__()
        if not (math.isfinite(self.lattice) and self.lattice > 0):
            raise ValueError(f"lattice must be a finite number > 0, got {self.lattice}")

    def noise_only(self, accountant: Accountant, shape) -> np.ndarray:
        """The lattice noise for statistics that are computed later (pre-drawn per level)."""
        with accountant.drawing(self) as noise:
            return noise.lattice_laplace(self.scale, shape, self.lattice)

    def draw(self, accountant: Accountant, values) -> np.ndarray:
        arr = np.asarray(values, dtype=np.float64)
        return round_to_lattice(arr, self.lattice) + self.noise_only(accountant, arr.shape)

    def half_width(self, confidence: float = 0.95) -> float:
        steps = discrete_laplace_half_width(self.scale / self.lattice, confidence)
        return steps * self.lattice


# -- selection ---------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class Exponential(_PureDP):
    """The exponential mechanism: pick candidate c with P(c) ∝ exp(ε u(c) / (2 Δu)).

    Privacy claim: ε-DP when one unit changes every utility by at most `sensitivity` = Δu
    (McSherry, Talwar 2007); with `monotone` utilities (all move the same direction) the factor
    2 drops. Drawn as Gumbel-max: argmax u(c)/scale + G_c, scale = 2Δu/ε (Δu/ε if monotone).
    """

    KIND: ClassVar[MechanismKind] = MechanismKind.EXPONENTIAL
    monotone: bool = False

    def loss(self) -> PrivacyLoss:
        """ε-DP (no noise shape an accountant could use beyond that)."""
        return PrivacyLoss(LossKind.PURE, self.epsilon, 0.0, float(self.sensitivity), self.scale)

    @property
    def scale(self) -> float:
        factor = 1.0 if self.monotone else 2.0
        return factor * float(self.sensitivity) / float(self.epsilon)

    def draw(self, accountant: Accountant, utilities) -> int:
        """Index of the chosen candidate (one selection over a 1-D array of utilities)."""
        return int(self.draw_many(accountant, np.asarray(utilities, float)[None, :])[0])

    def draw_many(self, accountant: Accountant, utilities: np.ndarray) -> np.ndarray:
        """One independent selection per row of a 2-D utility array (rows: disjoint parts)."""
        u = np.asarray(utilities, dtype=np.float64)
        if u.ndim != 2 or u.shape[1] == 0:
            raise ValueError(f"{self.label}: utilities must be a non-empty 2-D array")
        with accountant.drawing(self) as noise:
            gumbel = _gumbel(noise.uniform(u.size)).reshape(u.shape)
        key = np.where(np.isfinite(u), u / self.scale + gumbel, -np.inf)
        return np.argmax(key, axis=1)

    def draw_segments(self, accountant: Accountant, utilities, segments) -> np.ndarray:
        """Selections over ragged candidate lists: `segments[k]` is the part of candidate k.

        Returns, per part (0..max(segments)), the index into `utilities` of its choice.
        """
        u = np.asarray(utilities, dtype=np.float64)
        seg = np.asarray(segments, dtype=np.int64)
        with accountant.drawing(self) as noise:
            key = u / self.scale + _gumbel(noise.uniform(u.size))
        order = np.lexsort((-key, seg))
        first = np.flatnonzero(np.r_[True, seg[order][1:] != seg[order][:-1]])
        return order[first]

    def utility_loss(self, n_candidates: int, confidence: float = 0.95) -> float:
        """With probability >= confidence the choice's utility is within this of the best:
        scale · ln(n_candidates / (1 - confidence))."""
        return self.scale * math.log(max(1, n_candidates) / (1.0 - confidence))


def _gumbel(u: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return -np.log(-np.log(u))


@dataclass(frozen=True, kw_only=True)
class NoisyThreshold(Mechanism):
    """Partition selection: keep a partition when its unit count + discrete Laplace >= T.

    Privacy claim: with unit counts of L1 sensitivity `sensitivity` (= C_u, the partitions a
    unit may touch) and scale b = C_u / ε, releasing only partitions whose noisy count reaches
    the integer `threshold` T is (ε, δ)-DP, δ covering the chance that a partition created by
    one unit survives (Wilson et al. 2020, Theorem 12, with the discrete tail). When `reuses`
    names another mechanism, the noisy counts are that mechanism's (no new draw, ε = 0 here).
    """

    KIND: ClassVar[MechanismKind] = MechanismKind.THRESHOLD
    sensitivity: float
    epsilon: float
    delta: float
    threshold: int
    reuses: str | None = None
    noise_scale: float | None = None  # the reused mechanism's scale (only with `reuses`)

    def __post_init__(self):
        _check_sensitivity(self.sensitivity)
        _check_epsilon(self.epsilon, allow_zero=self.reuses is not None)
        if self.reuses is None and self.noise_scale is not None:
            raise ValueError("noise_scale is derived from sensitivity / epsilon unless reused")
        if self.reuses is not None and not (self.noise_scale and self.noise_scale > 0):
            raise ValueError("a reused threshold states the reused mechanism's noise scale")
        Cost(self.epsilon, self.delta)  # validates

    @property
    def cost(self) -> Cost:
        return Cost(self.epsilon, self.delta)

    def loss(self) -> PrivacyLoss:
        """An approximate-DP (ε, δ) claim (δ > 0): ε for the noisy counts (0 when it reuses
        another mechanism's), δ for a partition only one neighbour has surviving."""
        if self.delta == 0:  # a threshold that cannot release a new partition
            return super().loss()
        return PrivacyLoss(
            LossKind.APPROXIMATE, self.epsilon, self.delta, float(self.sensitivity), self.scale
        )

    @property
    def scale(self) -> float:
        if self.noise_scale is not None:
            return float(self.noise_scale)
        return float(self.sensitivity) / float(self.epsilon)

    def draw(self, accountant: Accountant, unit_counts) -> tuple[np.ndarray, np.ndarray]:
        """(noisy unit counts, kept mask). Only for a threshold with its own noise."""
        if self.reuses is not None:
            raise ValueError(f"{self.label} reuses '{self.reuses}': call select() instead")
        counts = np.asarray(unit_counts, dtype=np.int64)
        with accountant.drawing(self) as noise:
            noisy = counts + noise.discrete_laplace(self.scale, size=counts.shape)
        return noisy, noisy >= self.threshold

    def select(self, accountant: Accountant, noisy_counts) -> np.ndarray:
        """The kept mask for counts already noised by the reused mechanism (no new draw)."""
        if self.reuses is None:
            raise ValueError(f"{self.label} has its own noise: call draw() instead")
        with accountant.drawing(self):
            return np.asarray(noisy_counts) >= self.threshold

    def survival(self, units: int) -> float:
        """P(a partition with `units` units is released) = P(units + Z >= T)."""
        b = self.scale
        q = math.exp(-1.0 / b)
        t = self.threshold - int(units)
        if t >= 1:
            return math.exp(-t / b - math.log1p(q))
        return -math.expm1(-(1 - t) / b - math.log1p(q))
