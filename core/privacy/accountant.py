"""The accountant of one release: the noise source, the charged budget, and every mechanism
that drew.

A release is charged before it reads data (`core.governance`); the accountant then holds that
charge as a privacy filter. Each `Mechanism.draw` records its object here before it draws:

- the first draw of a mechanism adds its cost (basic composition: costs add up);
- drawing the same object again adds nothing: by reusing the object the tool states that the
  draws fall on disjoint parts of the data (the nodes of one tree level, in several batches),
  so parallel composition applies; a second measurement of the same data needs a new object
  (and labels are unique within a release, so two objects cannot hide behind one name);
- a mechanism drawn `in_place_of` others (HTF: a pruned node's remaining path budget, drawn
  once instead of the deeper levels' counts on its subtree) consumes the budget of those it
  replaces — declared beforehand with `plan` — and must cost no more than they do together.
  The release's cost counts every consumed mechanism once, whether or not it drew itself;
- a draw that would take the cost past the charge raises `Overdraw` before any noise is drawn
  (a fault in the tool, which planned its charge from the same objects).

`mechanisms` is exactly the list of objects that drew noise: what a registry records, what
reports and the CLI show, and what a test that instruments `Noise` compares against.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from core.privacy.cost import ZERO, Cost, RhoClaim
from core.privacy.mechanisms import Mechanism
from core.privacy.noise import Noise
from core.privacy.pp_randomization import PPRandomization

# The mechanism whose draw is under way. Tests instrument `Noise` and read it: every noisy draw
# of every tool must happen inside a mechanism, at the scale that mechanism states.
DRAWING: ContextVar[Mechanism | None] = ContextVar("dpx_drawing_mechanism", default=None)


class Overdraw(RuntimeError):
    """A tool tried to draw beyond the charge it planned: a fault in DP Explorer, not the user's."""


class Accountant:
    """Privacy filter for one release. `budget` is what was charged (None: unlimited, e.g. an
    evaluation-only rebuild); `rho` is PP's (ρ1, ρ2) claim when the release makes one."""

    def __init__(self, noise: Noise, budget: Cost | None = None, rho: RhoClaim | None = None):
        self.noise = noise
        self.budget = budget
        self.rho = rho
        self._drawn: list[Mechanism] = []
        self._ids: set[int] = set()
        self._planned: dict[str, Mechanism] = {}

    # -- reading --------------------------------------------------------------------------------
    @property
    def mechanisms(self) -> tuple[Mechanism, ...]:
        """Every mechanism that drew, in the order of its first draw."""
        return tuple(self._drawn)

    @property
    def spent(self) -> Cost:
        return self._cost(self._drawn)

    @property
    def remaining(self) -> Cost | None:
        if self.budget is None:
            return None
        s = self.spent
        return Cost(
            max(0.0, self.budget.epsilon - s.epsilon), max(0.0, self.budget.delta - s.delta)
        )

    def require(self, cost: Cost, what: str = "this release") -> None:
        """Raise `Overdraw` unless `cost` still fits the budget (a check before a build)."""
        if self.budget is not None and not (self.spent + cost).fits(self.budget):
            raise Overdraw(
                f"{what} needs epsilon {cost.epsilon:g}, delta {cost.delta:g} but only "
                f"{self.remaining} of the charge {self.budget} is left"
            )

    def plan(self, mechanisms: Iterable[Mechanism]) -> None:
        """Declare mechanisms that later draws may replace on parts of the data (`in_place_of`).
        Declaring costs nothing until a mechanism draws or is replaced by one that draws."""
        for m in mechanisms:
            self._planned[m.label] = m

    # -- drawing (Mechanism.draw uses this) ---------------------------------------------------
    @contextmanager
    def drawing(self, mechanism: Mechanism) -> Iterator[Noise]:
        """Record `mechanism`, then yield the noise source for its draw."""
        self._record(mechanism)
        token = DRAWING.set(mechanism)
        try:
            yield self.noise
        finally:
            DRAWING.reset(token)

    def _record(self, mechanism: Mechanism) -> None:
        if id(mechanism) in self._ids:
            return  # the same object again: disjoint parts, parallel composition
        if any(m.label == mechanism.label for m in self._drawn):
            raise Overdraw(
                f"two mechanisms of one release are labelled '{mechanism.label}'; a second "
                "measurement needs its own label"
            )
        if isinstance(mechanism, PPRandomization):
            self._check_claim(mechanism)
        if mechanism.in_place_of:
            self._check_replacement(mechanism)
        after = self._cost([*self._drawn, mechanism])
        if self.budget is not None and not after.fits(self.budget):
            raise Overdraw(
                f"{mechanism.label} (epsilon {mechanism.cost.epsilon:g}, delta "
                f"{mechanism.cost.delta:g}) would take the release to epsilon {after.epsilon:g}, "
                f"delta {after.delta:g}, beyond its charge {self.budget}"
            )
        self._ids.add(id(mechanism))
        self._drawn.append(mechanism)

    def _check_claim(self, mechanism: PPRandomization) -> None:
        if self.rho is None:
            raise Overdraw(f"{mechanism.label}: a PP randomization needs a (rho1, rho2) claim")
        if mechanism.rho2 > self.rho.rho2 or mechanism.posterior_bound > self.rho.rho2:
            raise Overdraw(
                f"{mechanism.label}: worst posterior {mechanism.posterior_bound} is above the "
                f"claimed rho2 = {self.rho.rho2}"
            )

    def _check_replacement(self, mechanism: Mechanism) -> None:
        replaced = ZERO
        for label in mechanism.in_place_of:
            planned = self._planned.get(label)
            if planned is None:
                raise Overdraw(
                    f"{mechanism.label} replaces '{label}', which this release did not plan"
                )
            replaced = replaced + planned.cost
        if not mechanism.cost.fits(replaced):
            raise Overdraw(
                f"{mechanism.label} costs {mechanism.cost}, more than the {replaced} it replaces"
            )

    def _cost(self, drawn: Iterable[Mechanism]) -> Cost:
        """Each consumed mechanism once: those that drew, and those replaced by one that drew."""
        consumed: dict[str, Cost] = {}
        for m in drawn:
            if m.in_place_of:
                for label in m.in_place_of:
                    consumed.setdefault(label, self._planned[label].cost)
            else:
                consumed[m.label] = m.cost
        total = ZERO
        for cost in consumed.values():
            total = total + cost
        return total
