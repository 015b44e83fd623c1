"""The privacy unit of a location histogram: one point, or one person with at most K points.

Every builder takes `unit=` and scales each mechanism's sensitivity by `unit.max_points`
(`K`; 1 for a point): a person who may hold K points changes a vector of disjoint cell counts
by at most K in L1 norm, an HTF split objective by less than K (2 + lattice), a kd-tree median
score by at most K, and the noisy N by at most K. Sizing rules (grid side, tree height,
Recommended's features) read the noise through `effective_epsilon` = ε / K, the budget a single
point effectively gets, so the structures stay matched to their noise.

`PointUnit` and `PersonUnit` are what a registry, a report or a page reads to say whom the
release protects (`describe()`); `to_json()` is their stored form.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import InputError

MAX_POINTS_LIMIT = 1_000_000  # a bound above this protects nobody usefully (noise scale K / ε)


@dataclass(frozen=True)
class PointUnit:
    """Neighbouring datasets differ by one point (one row of the table)."""

    @property
    def max_points(self) -> int:
        return 1

    @property
    def column(self) -> None:
        return None

    def describe(self) -> str:
        return "one point (one row of the table)"

    def guarantee(self) -> str:
        """The privacy claim in one sentence (exports, CLI JSON, reports)."""
        return (
            "record-level epsilon-DP: neighbouring datasets differ by one point; a person "
            "with k points is protected at k x epsilon"
        )

    def to_json(self) -> dict:
        return {"kind": "point", "max_points": 1, "text": self.describe()}


@dataclass(frozen=True)
class PersonUnit:
    """Neighbouring datasets differ by one person (all rows with one value of `column`); each
    person keeps at most `k` points, a uniform random subset drawn per person before binning
    (`core.spatial.persons.bound_points_per_person`)."""

    column: str
    k: int

    def __post_init__(self):
        if not str(self.column).strip():
            raise InputError("the person column needs a name: pass --uid COL.")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise InputError(
                f"--max-points-per-person must be a whole number >= 1, got {self.k!r}."
            )
        if self.k > MAX_POINTS_LIMIT:
            raise InputError(
                f"--max-points-per-person {self.k} is too large; use at most {MAX_POINTS_LIMIT:,}."
            )

    @property
    def max_points(self) -> int:
        return int(self.k)

    def _points(self) -> str:
        return f"{self.k} point" if self.k == 1 else f"{self.k} points"

    def describe(self) -> str:
        return f"each person (at most {self._points()}; person column '{self.column}')"

    def guarantee(self) -> str:
        return (
            f"person-level epsilon-DP: neighbouring datasets differ by all the points of one "
            f"person (column '{self.column}'); each person keeps at most {self._points()}, "
            "chosen at random independently of everyone else"
        )

    def to_json(self) -> dict:
        return {
            "kind": "person",
            "column": self.column,
            "max_points": int(self.k),
            "text": self.describe(),
        }


Unit = PointUnit | PersonUnit
POINT = PointUnit()


def unit_from(column: str | None, k: int | None) -> Unit:
    """The unit for a person column and a bound (both or neither; one-line errors)."""
    if column is None and k is None:
        return POINT
    if column is None:
        raise InputError(
            "--max-points-per-person needs the person column: add --uid COL (without one, "
            "the unit is one point)."
        )
    if k is None:
        raise InputError(
            f"--uid {column} needs a bound: add --max-points-per-person K (each person then "
            "keeps at most K points)."
        )
    return PersonUnit(str(column), int(k))


def effective_epsilon(epsilon: float, unit: Unit) -> float:
    """ε / K: the budget one point gets when the unit is a person with at most K points.
    Sizing rules designed for point-level noise use it (the noise scale is K / ε)."""
    return float(epsilon) / unit.max_points
