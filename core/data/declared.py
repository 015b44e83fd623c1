"""A table's public facts, declared by its owner: column types, nullability, text widths,
domains, bounds and a size class (issue 27).

Every accept, refuse, type, limit and message an analyst meets derives from a `TableSchema`,
never from the data at query time: a fact read from private values (a null count that turns an
integer column into DOUBLE, a file's byte size, the longest string) would be private itself.

A registered dataset's schemas are stored in the registry (`core.registry`). `propose` builds a
proposal for the owner from what a file *declares* — Parquet's logical types and its
required/optional flags; for CSV, a typed read of its header and a sample that the owner
confirms — never from null counts, min/max statistics or the longest value. Files given directly
in owner mode are read with such a proposal, labelled `SchemaSource.INFERRED`.

Reading data into a schema (`core.data.relation`) is total: a value that does not fit its type,
text width, domain or bounds becomes missing; a row with a missing value in a non-nullable
column is left out. No value can make a read fail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum

from core.errors import InputError


class ColumnType(StrEnum):
    """The declared type of a column (its SQL name, as DuckDB and Spark spell it)."""

    INTEGER = "BIGINT"
    FLOAT = "DOUBLE"
    TEXT = "VARCHAR"
    BOOLEAN = "BOOLEAN"
    DATE = "DATE"
    TIMESTAMP = "TIMESTAMP"

    @classmethod
    def parse(cls, text: str) -> ColumnType:
        key = str(text).strip().upper()
        for member in cls:
            if key in (member.value, member.name):
                return member
        aliases = {"INT": cls.INTEGER, "FLOAT64": cls.FLOAT, "STRING": cls.TEXT,
                   "REAL": cls.FLOAT, "BOOL": cls.BOOLEAN, "DATETIME": cls.TIMESTAMP}  # fmt: skip
        if key in aliases:
            return aliases[key]
        names = ", ".join(m.name.lower() for m in cls)
        raise InputError(f"unknown column type '{text}'. Fix: one of {names}.")


# The most characters a value of each non-text type can print as (BIGINT's sign and 19 digits;
# DOUBLE's shortest round-trip form; ISO dates and timestamps), used to bound casts to text.
PRINTED_WIDTH = {
    ColumnType.INTEGER: 20,
    ColumnType.FLOAT: 25,
    ColumnType.BOOLEAN: 5,
    ColumnType.DATE: 13,
    ColumnType.TIMESTAMP: 32,
}
DEFAULT_TEXT_LENGTH = 256  # characters, a public default: the owner declares the real width
MAX_TEXT_LENGTH = 1_000_000
BYTES_PER_CHARACTER = 4  # UTF-8: a character is at most 4 bytes


class SchemaSource(StrEnum):
    """Where a table's schema comes from."""

    DECLARED = "declared"  # stored in the registry: stated (or confirmed) by the owner
    INFERRED = "inferred"  # a file given directly in owner mode: proposed from the file


@dataclass(frozen=True)
class ColumnFact:
    """One column's public facts. `max_length` (text only) is in characters; `categories`
    (text, integer or boolean) is the column's whole domain; `bounds` (numeric) its value range.
    A value outside any of them is read as missing (text longer than `max_length` is cut)."""

    name: str
    type: ColumnType
    nullable: bool = True
    max_length: int | None = None
    categories: tuple[str, ...] | None = None
    bounds: tuple[float, float] | None = None

    def __post_init__(self):
        if not str(self.name):
            raise InputError("a column needs a name.")
        if self.type is ColumnType.TEXT:
            length = self.max_length if self.max_length is not None else DEFAULT_TEXT_LENGTH
            if (
                isinstance(length, bool)
                or not isinstance(length, int)
                or not (1 <= length <= MAX_TEXT_LENGTH)
            ):
                raise InputError(
                    f"column '{self.name}': max length must be an integer in "
                    f"[1, {MAX_TEXT_LENGTH:,}], got {self.max_length!r}. Fix: e.g. max=64."
                )
            object.__setattr__(self, "max_length", int(length))
        elif self.max_length is not None:
            raise InputError(
                f"column '{self.name}': a max length applies to text only, not "
                f"{self.type.name.lower()}. Fix: drop max= for this column."
            )
        if self.categories is not None:
            if self.type not in (ColumnType.TEXT, ColumnType.INTEGER, ColumnType.BOOLEAN):
                raise InputError(
                    f"column '{self.name}': categories apply to text, integer or boolean "
                    "columns. Fix: declare bounds for a numeric column instead."
                )
            values = tuple(dict.fromkeys(str(v) for v in self.categories))
            if not values or any(v == "" for v in values):
                raise InputError(
                    f"column '{self.name}': the category list is empty or has an empty value. "
                    "Fix: list the values, e.g. categories=a|b|c."
                )
            object.__setattr__(self, "categories", values)
        if self.bounds is not None:
            if self.type not in (ColumnType.INTEGER, ColumnType.FLOAT):
                raise InputError(
                    f"column '{self.name}': bounds apply to numeric columns only. Fix: drop "
                    "the bounds."
                )
            low, high = (float(b) for b in self.bounds)
            if not (math.isfinite(low) and math.isfinite(high) and low <= high):
                raise InputError(
                    f"column '{self.name}': bounds must be finite with low <= high, got "
                    f"{self.bounds}. Fix: e.g. bounds=0:120."
                )
            object.__setattr__(self, "bounds", (low, high))

    @property
    def printed_width(self) -> int:
        """The most characters this column's value can have as text (declared, not measured)."""
        if self.type is ColumnType.TEXT:
            return int(self.max_length)
        if self.categories is not None:
            return max(len(c) for c in self.categories)
        return PRINTED_WIDTH[self.type]

    def to_json(self) -> dict:
        out: dict = {"name": self.name, "type": self.type.name.lower(), "nullable": self.nullable}
        if self.max_length is not None:
            out["max_length"] = self.max_length
        if self.categories is not None:
            out["categories"] = list(self.categories)
        if self.bounds is not None:
            out["bounds"] = list(self.bounds)
        return out

    @classmethod
    def from_json(cls, data: dict) -> ColumnFact:
        return cls(
            name=str(data["name"]),
            type=ColumnType.parse(data["type"]),
            nullable=bool(data.get("nullable", True)),
            max_length=data.get("max_length"),
            categories=None if data.get("categories") is None else tuple(data["categories"]),
            bounds=None if data.get("bounds") is None else tuple(data["bounds"]),
        )


SIZE_CLASSES = tuple(10**k for k in range(3, 13))  # 1,000 ... 10^12 rows


def size_class(rows: int) -> int:
    """The smallest size class (a power of ten, at least 1,000) holding `rows` rows."""
    for bound in SIZE_CLASSES:
        if rows <= bound:
            return bound
    return SIZE_CLASSES[-1]


@dataclass(frozen=True)
class TableSchema:
    """A table's declared public facts: its columns in file order, an upper bound on its rows
    (`max_rows`, the public size class) and, for CSV, the field separator."""

    columns: tuple[ColumnFact, ...]
    max_rows: int
    source: SchemaSource = SchemaSource.DECLARED
    delimiter: str = ","
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self):
        if not self.columns:
            raise InputError("a table schema needs at least one column.")
        names = [c.name.lower() for c in self.columns]
        if len(set(names)) != len(names):
            raise InputError(f"column names must be distinct (case-insensitive), got {names}.")
        if (
            isinstance(self.max_rows, bool)
            or not isinstance(self.max_rows, int)
            or not (1 <= self.max_rows <= SIZE_CLASSES[-1])
        ):
            raise InputError(
                f"the size class (max rows) must be an integer in [1, {SIZE_CLASSES[-1]:.0e}], "
                f"got {self.max_rows!r}. Fix: e.g. --max-rows 1000000."
            )
        if self.delimiter not in (",", ";", "\t", "|"):
            raise InputError(f"the CSV separator must be one of , ; tab |, got {self.delimiter!r}.")

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> ColumnFact | None:
        key = str(name).lower()
        return next((c for c in self.columns if c.name.lower() == key), None)

    def types(self) -> dict[str, str]:
        """{column: SQL type}, as the validator and the engines see them."""
        return {c.name: c.type.value for c in self.columns}

    def with_column(self, fact: ColumnFact) -> TableSchema:
        """A copy with `fact` replacing the column of the same name (which must exist)."""
        if self.column(fact.name) is None:
            raise InputError(
                f"no column '{fact.name}' in the schema (columns: {', '.join(self.names)}). "
                "Fix: name an existing column."
            )
        columns = tuple(fact if c.name.lower() == fact.name.lower() else c for c in self.columns)
        return replace(self, columns=columns)

    def to_json(self) -> dict:
        return {
            "columns": [c.to_json() for c in self.columns],
            "max_rows": self.max_rows,
            "source": self.source.value,
            "delimiter": self.delimiter,
        }

    @classmethod
    def from_json(cls, data: dict) -> TableSchema:
        return cls(
            columns=tuple(ColumnFact.from_json(c) for c in data["columns"]),
            max_rows=int(data["max_rows"]),
            source=SchemaSource(data.get("source", SchemaSource.DECLARED.value)),
            delimiter=str(data.get("delimiter", ",")),
        )
