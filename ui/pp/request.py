"""The PP balancing page's state as typed objects (issue 28): what a publication, the exact
(teaching) plan and the Plan step are asked for.

Pure (no Streamlit), so tests build them without a page. Each is frozen, made once per run from
the widgets, and has a `fingerprint()`: a stable text of every field. A kept result holds the
request it was made with; it is stale when `kept.request.fingerprint() != request.fingerprint()`.

* `PPPageRequest`: one publication as asked for — the plan's `PPSettings`, the release's
  `ReleaseOptions` and the noise's seed (None: secure noise). `params()` is the `PPParams` the
  governed flow prepares (`ui.pp.params.page_params`, the same object `dpx balance` builds).
* `ExactPlanRequest`: what the owner's exact plan and its Phase 1 stepper are drawn from (the
  SA's exact counts and the plan's options); a new one sends the stepper back to step 1.
* `PPPlanRequest`: what the Plan step's answer was computed from (public shape, target,
  confidence, the plan's ε, ρ1 and ρ2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from fractions import Fraction

from core.balancing.service import PPParams
from core.planning.pp import PPShape
from core.privacy import Noise
from ui.fingerprint import fingerprint as fingerprint_of
from ui.pp.params import PPSettings, ReleaseOptions, page_params

NAMES = {"sa": "SA", "rho1": "ρ1", "rho2": "ρ2", "plan_epsilon": "plan ε"}  # in the warning


@dataclass(frozen=True)
class PPPageRequest:
    """One publication of the PP page as asked for: public parameters only.

    `settings` the plan's choices (data, SA, ρ1, ρ2, missing values, tie and merge policies);
    `options` the release's (published columns, the plan's ε, declared categories, fallback);
    `seed` the demo noise's seed (None: secure noise)."""

    settings: PPSettings
    options: ReleaseOptions
    seed: int | None = None

    @classmethod
    def of(cls, settings: PPSettings, options: ReleaseOptions, noise: Noise) -> PPPageRequest:
        """The request from the page's typed choices and the noise on screen."""
        return cls(settings, options, noise.seed)

    @property
    def noise(self) -> Noise:
        """A noise source of the request's mode (seeded with `seed`, else secure)."""
        return Noise.from_seed(self.seed)

    @property
    def data(self) -> str:
        """The data choice's key (what the publication was drawn from)."""
        return self.settings.data

    def params(self) -> PPParams:
        """The typed parameters the governed flow prepares (`ui.pp.params.page_params`)."""
        return page_params(self.settings, self.options)

    def same_plan(self, other: PPPageRequest) -> bool:
        """Whether `other` asks for the same plan (every setting equal): a publication kept for
        another plan is gone, not labelled."""
        return self.settings == other.settings

    def same_table(self, other: PPPageRequest) -> bool:
        """Whether `other` publishes the same data's same SA (the analyst view's test)."""
        return (self.settings.data, self.settings.sa) == (other.settings.data, other.settings.sa)

    def changes(self, now: PPPageRequest) -> list[str]:
        """What differs from this (kept) request to the one on screen, in words
        ("ρ1: 1/3 → 1/4"); empty when they are the same."""
        pairs = [
            *((f.name, getattr(self.settings, f.name), getattr(now.settings, f.name))
              for f in fields(PPSettings)),
            *((f.name, getattr(self.options, f.name), getattr(now.options, f.name))
              for f in fields(ReleaseOptions)),
        ]  # fmt: skip
        words = [
            f"{NAMES.get(name, name.replace('_', ' '))}: {_short(before)} → {_short(after)}"
            for name, before, after in pairs
            if before != after
        ]
        if self.seed != now.seed:
            words.append(f"noise: {_noise(self.seed)} → {_noise(now.seed)}")
        return words

    def fingerprint(self) -> str:
        """A stable text of the whole request: equal requests give equal fingerprints, a change
        in any field a different one (what marks a kept publication stale)."""
        return fingerprint_of(self)


def _noise(seed: int | None) -> str:
    return "secure" if seed is None else f"seeded (seed {seed})"


def _short(value) -> str:
    if isinstance(value, tuple):
        return ", ".join(map(str, value)) or "none"
    return str(value)


@dataclass(frozen=True)
class ExactPlanRequest:
    """What the owner's exact (teaching) plan is drawn from: the SA's exact counts in order and
    the plan's options. Never recorded or released: it keeps the Phase 1 stepper's place."""

    counts: tuple[tuple[str, int], ...]
    rho1: str
    rho2: str
    tie: str
    merge: str

    @classmethod
    def of(cls, settings: PPSettings, counts: Mapping[str, int]) -> ExactPlanRequest:
        return cls(
            tuple((str(v), int(c)) for v, c in counts.items()),
            settings.rho1, settings.rho2, settings.tie, settings.merge,
        )  # fmt: skip

    def fingerprint(self) -> str:
        """A stable text of every field (a new one sends the stepper back to step 1)."""
        return fingerprint_of(self)


@dataclass(frozen=True)
class PPPlanRequest:
    """What the PP Plan step's answer is computed from: the public `shape` (categories, table
    size), the error `target` (percentage points), the `confidence`, the partition plan's ε and
    the (ρ1, ρ2) on screen, exact."""

    shape: PPShape
    target: float
    confidence: float
    plan_epsilon: float
    rho1: Fraction
    rho2: Fraction

    @property
    def error(self) -> float:
        """The target as a share (the planner's unit)."""
        return self.target / 100

    def fingerprint(self) -> str:
        """A stable text of every field (a kept answer for another one is not shown)."""
        return fingerprint_of(self)
