"""Location histograms as two steps: build the releases (charged), then evaluate them (not).

1. Each method's release is governed on its own (`core.governance.location.release_methods`:
   charged ε before its builder reads the counts, drawing through an accountant holding that
   charge); a `ChargedRelease` pairs the built release with its registry id. These are the
   releases a map shows.
2. `evaluate(releases, F, ...)` scores them against the raw data: the MRE of each charged
   release on fresh random queries, and the MRE over `reps` evaluation-only rebuilds
   (`core.spatial.evaluate.compare`). Evaluation reads the true data and is never released: its
   outputs are owner-only, and what its rebuilds would cost is reported as
   `evaluation_epsilon`, never charged to a budget.

Composition is basic: k methods at ε each cost k·ε of the dataset's budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.errors import InputError
from core.spatial.evaluate import EVALUATION_LABEL, Comparison, compare, stream
from core.spatial.queries import (
    DEFAULT_SIZES,
    DEFAULT_SMOOTHING,
    answer,
    prefix_sums,
    random_queries,
    relative_errors,
)
from core.spatial.release import Release
from core.spatial.unit import POINT, Unit

if TYPE_CHECKING:
    from core.spatial.service import HTFOptions

UNIT = POINT.describe()


@dataclass(frozen=True)
class ChargedRelease:
    """A built release and the charge that paid for it (`charge_id`: e.g. a registry id)."""

    method: str
    epsilon: float
    release: Release
    noise_label: str
    charge_id: int | None = None


@dataclass(frozen=True)
class Evaluation:
    """Owner-only accuracy of charged releases (not differentially private)."""

    released_mre: dict[str, float]  # each charged release, on one fresh query set
    comparison: Comparison  # MRE over `reps` evaluation-only rebuilds of each method
    evaluation_epsilon: float  # what those rebuilds consumed; not released, never charged
    label: str = EVALUATION_LABEL

    def table(self) -> list[dict]:
        """One row per method: the release's MRE, the rebuilds' mean ± std and their ε."""
        per_method = {r["method"]: r for r in self.comparison.overall}
        reps = self.comparison.settings.reps
        eps = self.comparison.settings.epsilon
        return [
            {
                "method": m,
                "released_mre": mre,
                "mre_over_reps": per_method[m]["mre"],
                "mre_std": per_method[m]["mre_std"],
                "reps": reps,
                "evaluation_epsilon": reps * eps,
            }
            for m, mre in self.released_mre.items()
        ]


def evaluate(
    releases: Sequence[ChargedRelease],
    F: np.ndarray,
    sizes: Sequence[float] = DEFAULT_SIZES,
    n_queries: int = 2000,
    reps: int = 3,
    smoothing: float = DEFAULT_SMOOTHING,
    seed: int | None = None,
    shape: str = "random",
    htf: HTFOptions | None = None,
    progress: Callable[[float, str], None] | None = None,
    unit: Unit = POINT,
) -> Evaluation:
    """Score charged releases against the raw data F (evaluation only; owner mode).

    Reads the true counts: NOT differentially private and never released. Charges nothing;
    the `reps` rebuilds per method (fresh evaluation noise streams) are reported as
    `evaluation_epsilon` = reps · Σ ε, shown as evaluation cost, not as released budget.
    `htf`: HTF's options for the rebuilds (`compare`), typed; None: the builders' defaults."""
    if not releases:
        raise InputError("no releases to evaluate: build them first.")
    epsilons = {r.epsilon for r in releases}
    if len(epsilons) != 1:
        raise InputError("evaluate releases built with one epsilon at a time.")
    ny, nx = F.shape
    S = prefix_sums(F.astype(np.int64))
    released_mre: dict[str, float] = {}
    queries = {
        f: random_queries(ny, nx, f, n_queries, stream(seed, reps, f"released:{f}"), shape)
        for f in sizes
    }
    truth = {f: answer(S, Q) for f, Q in queries.items()}
    for r in releases:
        P = prefix_sums(r.release.density_raster(ny, nx))
        errors = [relative_errors(answer(P, queries[f]), truth[f], smoothing) for f in sizes]
        released_mre[r.method] = float(np.concatenate(errors).mean())
    eps = releases[0].epsilon
    methods = [r.method for r in releases]
    comparison = compare(
        F, eps, methods, sizes, n_queries, reps, smoothing,
        None if seed is None else seed + 1,  # a seed of its own, not the releases' seed
        htf, shape, progress, unit=unit,
    )  # fmt: skip
    return Evaluation(released_mre, comparison, reps * eps * len(methods))
