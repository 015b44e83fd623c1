"""The DP SQL page's state as typed objects (issue 28): what a run, the bounds helper and the
Plan step are asked for.

Pure (no Streamlit), so tests build them without a page. Each is frozen, made once per run from
the widgets, and has a `fingerprint()`: a stable text of every field. A kept result holds the
request it was made with; it is stale when `kept.request.fingerprint() != request.fingerprint()`.

* `SqlPageRequest`: one run as asked for — the query text, the data it runs on
  (`SqlData.engine_key`: the data choice, its public tables, its privacy unit and the files'
  fingerprint) and the noise's seed (None: secure noise). The engine (DuckDB or Spark) is not
  part of it: the same plan and seed release the same rows on either.
* `BoundsRequest`: one bounds proposal as asked for (data, table, column, per-unit statistic,
  ε, share clipped).
* `SqlPlanRequest`: what the Plan step's answer was computed from (the query with its ε
  normalised, the targets, the confidence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.privacy import Noise
from ui.fingerprint import fingerprint as fingerprint_of
from ui.sql.tables import SqlData


@dataclass(frozen=True)
class SqlPageRequest:
    """One run of the DP SQL page as asked for: public parameters only.

    `sql` the query as typed; `data` what it runs on (`SqlData.engine_key`); `seed` the demo
    noise's seed (None: secure noise)."""

    sql: str
    data: str
    seed: int | None = None

    @classmethod
    def of(cls, sql: str, data: SqlData, noise: Noise) -> SqlPageRequest:
        """The request from the query on screen, the tables step's data and the noise."""
        return cls(sql, data.engine_key, noise.seed)

    @property
    def noise(self) -> Noise:
        """A fresh noise source of the request's mode (seeded with `seed`, else secure)."""
        return Noise.from_seed(self.seed)

    @property
    def noise_label(self) -> str:
        """The noise mode in words (with the seed when seeded)."""
        return self.noise.label

    def fingerprint(self) -> str:
        """A stable text of the whole request: equal requests give equal fingerprints, a change
        in any field a different one (what marks a kept result stale)."""
        return fingerprint_of(self)


@dataclass(frozen=True)
class BoundsRequest:
    """One proposal of the bounds helper as asked for: `data` the tables step's `SqlData.key`,
    the `table` and `column` bounded, the per-unit `statistic`, the `epsilon` charged and the
    `clip_share` of units left outside."""

    data: str
    table: str
    column: str
    statistic: str
    epsilon: float
    clip_share: float

    @classmethod
    def of(
        cls, data: SqlData, target: str, statistic: str, epsilon: float, clip_share: float
    ) -> BoundsRequest:
        """The request from the helper's widgets (`target`: "table.column")."""
        table, column = target.split(".", 1)
        return cls(data.key, table, column, statistic, float(epsilon), float(clip_share))

    def fingerprint(self) -> str:
        """A stable text of every field (kept bounds for another one are labelled)."""
        return fingerprint_of(self)


@dataclass(frozen=True)
class SqlPlanRequest:
    """What the DP SQL Plan step's answer is computed from: `query` the query text with its ε
    normalised (a plan does not depend on it), the `targets` as typed, the `confidence`."""

    query: str
    targets: tuple[str, ...]
    confidence: float

    @classmethod
    def of(cls, query: str, targets: Sequence[str], confidence: float) -> SqlPlanRequest:
        return cls(query, tuple(targets), float(confidence))

    def fingerprint(self) -> str:
        """A stable text of every field (a kept plan for another one is not shown)."""
        return fingerprint_of(self)
