"""The privacy unit as a type (issue 28): whom a release protects, said one way everywhere.

A `PrivacyUnit` is stated before anything is read, from what the owner declared (a dataset's
unit column or "each row is one person") or what the owner chose for files given directly.
Pages, CLI output, records and reports take their words from it (`words`), never from a string
assembled on the spot, so a release is described the same way in the app, the CLI and its
report.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.errors import InputError


class UnitKind(StrEnum):
    """What neighbouring datasets differ by."""

    PERSON = "person"  # all rows of one value of a declared person column
    ROW_IS_PERSON = "row"  # one row, and the owner declared that each row is one person
    RECORD = "record"  # one row, no person declared: a person with k rows gets k x epsilon


@dataclass(frozen=True)
class PrivacyUnit:
    """Whom a release protects: a person (by `column`), each row as one person, or one record.
    `max_contributions` (optional) is the public bound on what one person may contribute
    (points per person for location histograms); None where the mechanism bounds it itself."""

    kind: UnitKind
    column: str | None = None
    max_contributions: int | None = None

    def __post_init__(self):
        if (self.kind is UnitKind.PERSON) != bool(self.column):
            raise InputError(
                "a person unit needs its column, and only a person unit has one. Fix: pass "
                "--uid COL, or --row-is-unit if each row is one person."
            )

    @classmethod
    def person(cls, column: str, max_contributions: int | None = None) -> PrivacyUnit:
        return cls(UnitKind.PERSON, str(column), max_contributions)

    @classmethod
    def row_is_person(cls) -> PrivacyUnit:
        return cls(UnitKind.ROW_IS_PERSON)

    @classmethod
    def record(cls) -> PrivacyUnit:
        return cls(UnitKind.RECORD)

    @classmethod
    def declared(cls, column: str | None, row_is_unit: bool) -> PrivacyUnit:
        """The unit a dataset or an invocation declares: its column, each row, or neither."""
        if column and row_is_unit:
            raise InputError("give --uid COL or --row-is-unit, not both.")
        if column:
            return cls.person(column)
        return cls.row_is_person() if row_is_unit else cls.record()

    def words(self) -> str:
        """The unit in one phrase, as every page, command and report says it."""
        if self.kind is UnitKind.PERSON:
            bound = "" if self.max_contributions is None else (
                f"; at most {self.max_contributions:,} "
                f"{'row' if self.max_contributions == 1 else 'rows'} each"
            )  # fmt: skip
            return f"one person (column {self.column}{bound})"
        if self.kind is UnitKind.ROW_IS_PERSON:
            return "one row (each row is one person)"
        return "one row (no person column declared: a person with k rows is protected at k x ε)"

    def to_json(self) -> dict:
        out: dict = {"kind": self.kind.value, "text": self.words()}
        if self.column:
            out["column"] = self.column
        if self.max_contributions is not None:
            out["max_contributions"] = self.max_contributions
        return out
