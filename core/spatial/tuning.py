"""Tuning view (owner only, evaluation only): MRE against epsilon per method, and the smallest
epsilon at which a method's MRE reaches a target, read off the measured curve.

Everything here reads the raw data (true query answers), so NOTHING it returns is differentially
private: it is for the data owner choosing epsilon before a release, on their own data or on
public data like it. It releases nothing and charges nothing (each build draws on a throwaway
`Accountant`; the registry never sees it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

import numpy as np

from core.errors import InputError
from core.spatial.evaluate import EVALUATION_LABEL, compare
from core.spatial.queries import DEFAULT_SIZES, DEFAULT_SMOOTHING
from core.spatial.unit import POINT, Unit

MIN_POINTS, MAX_POINTS = 6, 8  # epsilon values on the curve


def epsilon_grid(lo: float = 0.05, hi: float = 2.0, k: int = 7) -> tuple[float, ...]:
    """k log-spaced epsilon values from lo to hi (rounded to 3 significant digits)."""
    if not (0 < lo < hi and math.isfinite(hi)):
        raise InputError(f"need 0 < lowest epsilon < highest epsilon, got {lo} and {hi}.")
    if not MIN_POINTS <= k <= MAX_POINTS:
        raise InputError(f"the curve has {MIN_POINTS} to {MAX_POINTS} epsilon values, got {k}.")
    vals = np.exp(np.linspace(math.log(lo), math.log(hi), k))
    return tuple(float(f"{v:.3g}") for v in vals)


class Reach(Enum):
    """How the smallest epsilon reaching the target was read off the curve."""

    INTERPOLATED = "interpolated between two measured epsilons (log-log)"
    BELOW_RANGE = "already met at the smallest epsilon measured (the answer may be smaller)"
    NOT_REACHED = "not met at the largest epsilon measured (try larger epsilons)"


@dataclass(frozen=True)
class TuningPoint:
    """Overall MRE of one method at one epsilon: mean and std over the repetitions."""

    epsilon: float
    mre: float
    mre_std: float | None


@dataclass(frozen=True)
class SmallestEpsilon:
    """The smallest epsilon at which the mean MRE is <= target and stays so at every larger
    measured epsilon (a noisy bump above the target further right would otherwise make a
    single crossing meaningless). `epsilon` is None when the target is not reached."""

    epsilon: float | None
    reach: Reach


@dataclass(frozen=True)
class TuningCurve:
    method: str
    points: tuple[TuningPoint, ...]  # ascending epsilon
    smallest: SmallestEpsilon


@dataclass(frozen=True)
class TuningResult:
    """MRE-vs-epsilon curves (evaluation only: uses the raw data)."""

    curves: tuple[TuningCurve, ...]
    epsilons: tuple[float, ...]
    target: float
    reps: int
    queries_per_size: int
    query_sizes: tuple[float, ...]
    smoothing: float
    noise: dict
    label: str = EVALUATION_LABEL

    def to_rows(self) -> list[dict]:
        return [
            {"method": c.method, "epsilon": p.epsilon, "mre": p.mre, "mre_std": p.mre_std}
            for c in self.curves
            for p in c.points
        ]


def smallest_epsilon(points: Sequence[TuningPoint], target: float) -> SmallestEpsilon:
    """Read the smallest epsilon with MRE <= target off a measured curve (ascending epsilon).

    The last run of points that all meet the target decides: if it starts at the first point,
    the answer is at or below the measured range; otherwise MRE is interpolated linearly in
    (log eps, log MRE) between the last point above the target and the first point of the run.
    """
    if not points:
        raise InputError("no measured points.")
    if not target > 0:
        raise InputError(f"the MRE target must be > 0, got {target}.")
    eps = [p.epsilon for p in points]
    if any(b <= a for a, b in zip(eps, eps[1:], strict=False)):
        raise ValueError("points must be in ascending epsilon")
    ok = [p.mre <= target for p in points]
    if not ok[-1]:
        return SmallestEpsilon(None, Reach.NOT_REACHED)
    i = len(ok) - 1
    while i > 0 and ok[i - 1]:
        i -= 1
    if i == 0:
        return SmallestEpsilon(points[0].epsilon, Reach.BELOW_RANGE)
    a, b = points[i - 1], points[i]
    la, lb = math.log(a.epsilon), math.log(b.epsilon)
    ma, mb, mt = (math.log(max(v, 1e-300)) for v in (a.mre, b.mre, target))
    t = (ma - mt) / (ma - mb) if ma != mb else 1.0
    return SmallestEpsilon(float(math.exp(la + t * (lb - la))), Reach.INTERPOLATED)


def tune(
    F: np.ndarray,
    methods: Sequence[str],
    epsilons: Sequence[float],
    target: float,
    *,
    reps: int = 3,
    n_queries: int = 500,
    sizes: Sequence[float] = DEFAULT_SIZES,
    smoothing: float = DEFAULT_SMOOTHING,
    seed: int | None = None,
    progress: Callable[[float, str], None] | None = None,
    unit: Unit = POINT,
) -> TuningResult:
    """MRE of each method at each epsilon (mean ± std over `reps`), and the smallest epsilon
    reaching `target` per method.

    Not a release: reads the true counts (evaluation only), spends no budget. With a seed the
    query sets are the same at every epsilon (paired curves) and the run is reproducible.
    """
    if not methods:
        raise InputError("pick at least one method for the tuning curve.")
    epsilons = tuple(sorted(float(e) for e in epsilons))
    if not MIN_POINTS <= len(epsilons) <= MAX_POINTS or len(set(epsilons)) != len(epsilons):
        raise InputError(
            f"the curve needs {MIN_POINTS} to {MAX_POINTS} distinct epsilon values, "
            f"got {len(epsilons)}."
        )
    if not all(e > 0 and math.isfinite(e) for e in epsilons):
        raise InputError("every epsilon must be a positive number.")
    if not target > 0:
        raise InputError(f"the MRE target must be > 0, got {target}.")
    F = np.asarray(F)
    if int(F.sum()) <= 0:
        raise InputError("no points inside the grid: nothing to tune on.")
    found: dict[str, list[TuningPoint]] = {m: [] for m in methods}
    noise_desc: dict = {}
    for i, eps in enumerate(epsilons):

        def step(frac: float, text: str, i=i, eps=eps) -> None:
            if progress:
                progress((i + frac) / len(epsilons), f"ε = {eps:g}: {text}")

        comp = compare(F, eps, list(methods), sizes=sizes, n_queries=n_queries, reps=reps,
                       smoothing=smoothing, seed=seed, progress=step, unit=unit)  # fmt: skip
        noise_desc = comp.settings.noise
        for o in comp.overall:
            found[o["method"]].append(TuningPoint(eps, o["mre"], o["mre_std"]))
    if progress:
        progress(1.0, "done")
    curves = tuple(
        TuningCurve(m, tuple(pts), smallest_epsilon(pts, target)) for m, pts in found.items()
    )
    return TuningResult(
        curves=curves, epsilons=epsilons, target=float(target), reps=reps,
        queries_per_size=n_queries, query_sizes=tuple(sizes), smoothing=smoothing,
        noise=noise_desc,
    )  # fmt: skip
