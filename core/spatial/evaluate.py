"""MRE comparison of spatial methods (spec htf.md §5): repetitions, paired query sets, mean ± std.

Evaluation reads the true data, so its outputs are NOT differentially private: run it on
synthetic or public data, or as the data owner.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, Cost, Noise
from core.spatial.methods import method
from core.spatial.queries import (
    DEFAULT_SIZES,
    DEFAULT_SMOOTHING,
    answer,
    prefix_sums,
    random_queries,
    relative_errors,
)
from core.spatial.unit import POINT, Unit

if TYPE_CHECKING:  # the method table's typed options (service imports much; no cycle at runtime)
    from core.spatial.service import HTFOptions

EVALUATION_LABEL = "evaluation only — uses the raw data; not differentially private"


def stream(seed: int | None, rep: int, role: str) -> Noise:
    """Noise for one (repetition, role): SeedSequence([seed, rep, crc32(role)]) when seeded.

    The role id is a stable hash (never Python's salted hash()), so results do not depend on
    the order in which methods run. Without a seed every stream is the secure sampler.
    """
    if seed is None:
        return Noise.secure()
    ss = np.random.SeedSequence([int(seed), int(rep), zlib.crc32(role.encode())])
    return Noise.seeded(int(ss.generate_state(1, dtype=np.uint64)[0]))


@dataclass(frozen=True)
class CompareSettings:
    """What a comparison was run with: ε per rebuild, the methods, the query sizes (area
    fractions), queries per size, repetitions, smoothing, query shape and the evaluation seed
    (None: secure noise)."""

    epsilon: float
    methods: tuple[str, ...]
    query_sizes: tuple[float, ...]
    queries_per_size: int
    reps: int
    smoothing: float
    shape: str
    seed: int | None

    @property
    def noise(self) -> dict:
        """The evaluation noise's mode as JSON states it (the seed only when seeded)."""
        return Noise.from_seed(self.seed).describe()

    def to_json(self) -> dict:
        """The settings as `dpx compare --json` writes them (`params`)."""
        return {
            "epsilon": self.epsilon,
            "methods": list(self.methods),
            "query_sizes": list(self.query_sizes),
            "queries_per_size": self.queries_per_size,
            "reps": self.reps,
            "smoothing": self.smoothing,
            "shape": self.shape,
            "noise": self.noise,
        }


@dataclass
class Comparison:
    """Per (method, size) MRE over repetitions, plus per-method overall MRE and timings."""

    rows: list[dict]
    overall: list[dict]
    workload: list[dict]
    settings: CompareSettings
    releases: dict = field(default_factory=dict)  # method -> last repetition's Release

    def to_dict(self) -> dict:
        return {
            "results": self.rows,
            "overall": self.overall,
            "workload": self.workload,
            "params": self.settings.to_json(),
            "evaluation": EVALUATION_LABEL,
        }


def _mean_std(values: Sequence[float]) -> tuple[float, float | None]:
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), (float(arr.std(ddof=1)) if len(arr) > 1 else None)


def compare(
    F: np.ndarray,
    eps_tot: float,
    methods: Sequence[str],
    sizes: Sequence[float] = DEFAULT_SIZES,
    n_queries: int = 2000,
    reps: int = 3,
    smoothing: float = DEFAULT_SMOOTHING,
    seed: int | None = None,
    htf: HTFOptions | None = None,
    shape: str = "random",
    progress: Callable[[float, str], None] | None = None,
    keep_releases: bool = False,
    unit: Unit = POINT,
) -> Comparison:
    """Run every method `reps` times on F and score it on the same random queries per repetition.

    Each rebuild draws on its own `Accountant` (budget eps_tot, an evaluation stream); nothing
    is charged to any dataset: these builds are evaluation only. `htf`: HTF's options, each
    method taking the ones its row lists (`HTFOptions.keywords`); None: every builder's own
    defaults."""
    if not eps_tot > 0:
        raise InputError(f"epsilon must be > 0, got {eps_tot}.")
    if reps < 1 or n_queries < 1:
        raise InputError("need at least one repetition and one query per size.")
    for f in sizes:
        if not 0 < f <= 1:
            raise InputError(f"query sizes are area fractions in (0, 1], got {f}.")
    rows_of = {m: method(m) for m in methods}
    builders = {m: row.build for m, row in rows_of.items()}
    keywords = {m: {} if htf is None else htf.keywords(row) for m, row in rows_of.items()}
    ny, nx = F.shape
    S = prefix_sums(F.astype(np.int64))
    mre = {(m, f): [] for m in methods for f in sizes}
    overall = {m: [] for m in methods}
    seconds = {m: [] for m in methods}
    zero = {f: [] for f in sizes}
    releases: dict = {}
    steps, done = reps * len(methods), 0
    for rep in range(reps):
        Qs = {
            f: random_queries(ny, nx, f, n_queries, stream(seed, rep, f"queries:{f}"), shape)
            for f in sizes
        }
        truth = {f: answer(S, Q) for f, Q in Qs.items()}
        for f in sizes:
            zero[f].append(float(np.mean(truth[f] == 0)))
        for m in methods:
            if progress:
                progress(done / steps, f"repetition {rep + 1}/{reps}: {m}")
            accountant = Accountant(stream(seed, rep, m), Cost(eps_tot))
            t0 = time.perf_counter()
            rel = builders[m](F, eps_tot, accountant, unit=unit, **keywords[m])
            P = prefix_sums(rel.density_raster(ny, nx))
            seconds[m].append(time.perf_counter() - t0)
            res = []
            for f in sizes:
                re = relative_errors(answer(P, Qs[f]), truth[f], smoothing)
                mre[(m, f)].append(float(re.mean()))
                res.append(re)
            overall[m].append(float(np.concatenate(res).mean()))
            if keep_releases:
                releases[m] = rel
            done += 1
    if progress:
        progress(1.0, "done")
    rows = []
    for m in methods:
        for f in sizes:
            mean, std = _mean_std(mre[(m, f)])
            rows.append(
                {
                    "method": m,
                    "query_size": f,
                    "mre": mean,
                    "mre_std": std,
                    "build_seconds": float(np.mean(seconds[m])),
                    "reps": reps,
                }
            )
    overall_rows = []
    for m in methods:
        mean, std = _mean_std(overall[m])
        overall_rows.append({"method": m, "mre": mean, "mre_std": std})
    workload = [{"query_size": f, "fraction_empty": float(np.mean(zero[f]))} for f in sizes]
    settings = CompareSettings(
        eps_tot, tuple(methods), tuple(sizes), n_queries, reps, smoothing, shape, seed
    )
    return Comparison(rows, overall_rows, workload, settings, releases)
