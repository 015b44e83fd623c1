"""Typed validators for every `dpx` option value, applied while parsing (issue 17).

Each validator is an argparse `type=`: it turns the text into a value or refuses it with ONE
line that says what was wrong and what to write instead (argparse prefixes the option name; the
CLI exits 2). They run before any file is read or any budget is charged. Every value-taking
option of every subcommand must use one of them (or `choices=`); a test walks all parsers.

Documented ranges (the `--help` of each tool refers to these):

| kind | range | why |
|---|---|---|
| ε (epsilon, per-level, caps) | finite, 0 < ε ≤ 1e9 | above 1e9 the noise is below every float's resolution of a count; 1e308 overflowed |
| ε budget totals | finite, 0 ≤ ε ≤ 1e9 | as above; 0 = nothing may be spent |
| δ | finite, 0 ≤ δ < 1 | a probability; 1 would allow anything |
| ρ1, ρ2 | exact decimals / fractions / percents, ≤ 20 digits per part, in (0, 1) | `1e-5000` would make a 5000-digit denominator |
| seeds | whole numbers in [0, 2**63) | numpy's seed range; negative seeds are refused everywhere |
| grid rows/cols | [1, 4096] | `core.spatial.grid.MAX_GRID` |
| HTF T | [1, 64]; stop count finite in [-1e9, 1e9]; stop cells [1, 2**31) | |
| compare queries [1, 1e6], reps [1, 1000], smoothing finite in (0, 1e12] | | |
| SQL max groups [1, 1e6]; timeout (0, 86400] s | | `core.dpsql` limits |
| input files | ≤ 4095 bytes, names ≤ 255; if present: a regular file (never a FIFO, device or directory) | a FIFO would hang the reader |
| output files | as above; the parent directory exists; the target is not a directory, device or FIFO; the extension is one the command writes (`formats`) | `core.files.check_output_path` |
| outputs vs inputs | no output may be an input, a registered dataset's file or the live registry (symlinks, hard links) | `core.files.Outputs`, called by `core.cli.main` |
| text (names, queries, lists) | ≤ 1 MB (queries), ≤ 10,000 characters otherwise, no control characters in names | |

This module is imported by `core.cli` at start-up: it stays light (no numpy, pandas, duckdb).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import stat
from dataclasses import dataclass
from fractions import Fraction

from core.limits import EPSILON_MIN

EPSILON_MAX = 1e9
DELTA_MAX_EXCLUSIVE = 1.0
SEED_MAX = 2**63 - 1
GRID_MAX = 4096  # = core.spatial.grid.MAX_GRID (a test keeps them equal)
TIMEOUT_MAX_S = 86_400.0  # = core.dpsql.limits.MAX_TIMEOUT_S
MAX_GROUPS = 1_000_000  # = core.dpsql.check.ranges.MAX_GROUPS
PATH_MAX = 4095
NAME_MAX = 255
TEXT_MAX = 10_000
QUERY_MAX = 1_000_000
_NUMBER_TEXT_MAX = 64  # characters of a number: no 5000-digit literals


class Refused(argparse.ArgumentTypeError):
    """A refused option value (argparse reports it as `argument --x: MESSAGE`)."""


def _show(text: str, limit: int = 60) -> str:
    """The user's text, quoted on one line and shortened."""
    shown = repr(text) if len(text) <= limit else repr(text[: limit - 3] + "...")
    return shown


class Validator:
    """Base class: every `type=` of a dpx option is an instance of a subclass (the walker test
    checks this)."""

    __name__ = "value"

    def __call__(self, text: str):  # pragma: no cover - abstract
        raise NotImplementedError

    def refuse(self, message: str) -> Refused:
        """`message` prefixed by the validator's error code and label, if any (tools keep their
        own codes, e.g. DPX-B002, and their option names in OPTIONS(...) spelling)."""
        prefix = " ".join(p for p in (getattr(self, "code", ""), getattr(self, "label", "")) if p)
        return Refused(f"{prefix} {message}" if prefix else message)


@dataclass(frozen=True)
class Real(Validator):
    """A finite float in [low, high] (either end open if asked)."""

    low: float
    high: float
    low_open: bool = False
    high_open: bool = False
    example: str = "1"
    code: str = ""
    label: str = ""

    @property
    def range_text(self) -> str:
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        return f"{left}{self.low:g}, {self.high:g}{right}"

    def __call__(self, text: str) -> float:
        raw = str(text).strip()
        try:
            if len(raw) > _NUMBER_TEXT_MAX:
                raise ValueError
            value = float(raw)
        except ValueError:
            raise self.refuse(
                f"expected a number in {self.range_text}, got {_show(raw)}. Fix: e.g. {self.example}."
            ) from None
        low_ok = value > self.low if self.low_open else value >= self.low
        high_ok = value < self.high if self.high_open else value <= self.high
        if not (math.isfinite(value) and low_ok and high_ok):
            raise self.refuse(
                f"must be a finite number in {self.range_text}, got {_show(raw)}. "
                f"Fix: e.g. {self.example}."
            )
        return value


@dataclass(frozen=True)
class Integer(Validator):
    """A whole number in [low, high]."""

    low: int
    high: int
    example: str = "1"
    code: str = ""

    def __call__(self, text: str) -> int:
        raw = str(text).strip()
        if not re.fullmatch(r"[-+]?\d{1,30}", raw):
            raise self.refuse(
                f"expected a whole number in [{self.low}, {self.high}], got {_show(raw)}. "
                f"Fix: e.g. {self.example}."
            )
        value = int(raw)
        if not self.low <= value <= self.high:
            raise self.refuse(
                f"must be a whole number in [{self.low}, {self.high}], got {_show(raw)}. "
                f"Fix: e.g. {self.example}."
            )
        return value


_DECIMAL = r"(?:\d{1,20}(?:\.\d{0,20})?|\.\d{1,20})(?:[eE][-+]?\d{1,2})?"
_RATIONAL = re.compile(
    rf"(?P<dec>{_DECIMAL})\s*(?P<pct>%?)|(?P<num>\d{{1,20}})/(?P<den>\d{{1,20}})"
)


@dataclass(frozen=True)
class Rational(Validator):
    """An exact rational of bounded size strictly inside (0, 1): a decimal (0.3), a fraction
    (1/3) or a percent (30%). Returns the text unchanged (the tool parses it exactly)."""

    example: str = "1/3"
    code: str = ""

    def __call__(self, text: str) -> str:
        raw = str(text).strip()
        match = _RATIONAL.fullmatch(raw)
        if match is None:
            raise self.refuse(
                f"{_show(raw)} is not a number: expected a decimal (0.3), a fraction (1/3) or a "
                f"percent (30%) with at most 20 digits per part. Fix: e.g. {self.example}."
            )
        if match["num"] is not None:
            if int(match["den"]) == 0:
                raise self.refuse(f"the fraction {_show(raw)} divides by zero. Fix: e.g. 1/3.")
            value = Fraction(int(match["num"]), int(match["den"]))
        else:
            value = Fraction(match["dec"]) / (100 if match["pct"] else 1)
        if not 0 < value < 1:
            raise self.refuse(
                f"{_show(raw)} is outside (0, 1): a probability strictly between 0 and 1. "
                f"Fix: e.g. {self.example}."
            )
        return raw


def _path_length_problem(raw: str) -> str | None:
    if not raw:
        return "the path is empty"
    if "\x00" in raw:
        return "the path contains a NUL byte"
    size = len(os.fsencode(raw))
    if size > PATH_MAX:
        return f"the path is {size} bytes long, above the limit of {PATH_MAX}"
    long_part = next((p for p in raw.split(os.sep) if len(os.fsencode(p)) > NAME_MAX), None)
    if long_part is not None:
        return f"a name in the path is {len(os.fsencode(long_part))} bytes long, above {NAME_MAX}"
    return None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


@dataclass(frozen=True)
class InputFile(Validator):
    """A path to read: bounded length and, when it exists, a regular file (a FIFO would hang
    the reader, a device never ends). A missing file is left to the tool, which says so."""

    what: str = "file"
    code: str = ""

    def __call__(self, text: str) -> str:
        raw = str(text)
        problem = _path_length_problem(raw)
        if problem is not None:
            raise self.refuse(f"{problem}. Fix: name an existing {self.what}.")
        try:
            mode = os.stat(raw).st_mode
        except FileNotFoundError:
            return raw
        except OSError as err:
            raise self.refuse(
                f"cannot read {_show(raw)}: {err.strerror}. Fix: name an existing {self.what}."
            ) from None
        if not stat.S_ISREG(mode):
            raise self.refuse(
                f"{_show(raw)} is {_kind(mode)}, not a regular file. Fix: name a {self.what}."
            )
        return raw


@dataclass(frozen=True)
class TableSpec(Validator):
    """`NAME=FILE`: the file part checked like `InputFile` (the format is checked by the tool,
    which names its own flag)."""

    code: str = ""

    def __call__(self, text: str) -> str:
        raw = str(text)
        if len(raw) > PATH_MAX + NAME_MAX + 1:
            raise self.refuse(f"the value is {len(raw)} characters long. Fix: use NAME=FILE.")
        _, sep, path = raw.partition("=")
        if sep and path.strip():
            InputFile("CSV or Parquet file", self.code)(path.strip())
        return raw


@dataclass(frozen=True)
class OutputFile(Validator):
    """A path to write whole: bounded length, the parent exists and is a directory (or, with
    `missing_parents`, the nearest existing ancestor is one: the tool creates the rest), and an
    existing target is a regular file (not a directory, a device such as /dev/full, a FIFO)."""

    missing_parents: bool = False
    code: str = ""
    formats: tuple[str, ...] = ()  # the extensions the command writes (its format follows)

    def __call__(self, text: str) -> str:
        raw = str(text)
        problem = _path_length_problem(raw)
        if problem is not None:
            raise self.refuse(f"{problem}. Fix: use a shorter file path.")
        from core.errors import InputError
        from core.files import check_output_path

        try:
            check_output_path(raw, missing_parents=self.missing_parents)
        except InputError as err:
            raise self.refuse(str(err)) from None
        if self.formats and not raw.lower().endswith(self.formats):
            stem, suffix = os.path.splitext(raw)
            said = f"'{suffix}' files" if suffix else "files without an extension"
            listed = ", ".join(self.formats[:-1]) + " or " if len(self.formats) > 1 else ""
            raise self.refuse(
                f"{_show(raw)} must end in {listed}{self.formats[-1]} (the file's format "
                f"follows its extension; this command does not write {said}). Fix: e.g. "
                f"{_show(os.path.basename(stem) + self.formats[0])}."
            )
        return raw


@dataclass(frozen=True)
class Directory(Validator):
    """A directory to use (created if missing): bounded length; if it exists, a directory."""

    code: str = ""

    def __call__(self, text: str) -> str:
        raw = str(text)
        problem = _path_length_problem(raw)
        if problem is not None:
            raise self.refuse(f"{problem}. Fix: use a shorter directory path.")
        path = os.path.expanduser(raw)
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            return raw
        except OSError as err:
            raise self.refuse(
                f"cannot use {_show(raw)}: {err.strerror}. Fix: name a directory you can use."
            ) from None
        if not stat.S_ISDIR(mode):
            raise self.refuse(f"{_show(raw)} is {_kind(mode)}. Fix: name a directory.")
        return raw


@dataclass(frozen=True)
class Text(Validator):
    """Free text of bounded length (a query, a list, a URL); `name=True` also refuses control
    characters (column and dataset names are printed in one-line messages)."""

    limit: int = TEXT_MAX
    name: bool = False
    code: str = ""

    def __call__(self, text: str) -> str:
        raw = str(text)
        if len(raw) > self.limit:
            raise self.refuse(
                f"the value is {len(raw)} characters long, above the limit of {self.limit}. "
                "Fix: shorten it."
            )
        if self.name and any(ord(c) < 32 or ord(c) == 127 for c in raw):
            raise self.refuse(f"{_show(raw)} contains control characters. Fix: type the name.")
        return raw


@dataclass(frozen=True)
class NameList(Validator):
    """A comma-separated list of names (columns, category values): at least one, no empty item
    (`,,` and `a,,b` are typing slips, never "no columns"), none twice; returns the text. An
    option that may be left out stays None: leaving it out, not an empty list, means "none"."""

    what: str = "column names"
    example: str = "A,B"
    limit: int = TEXT_MAX

    def __call__(self, text: str) -> str:
        raw = str(text)
        Text(limit=self.limit)(raw)
        items = [p.strip() for p in raw.split(",")]
        if not any(items):
            raise self.refuse(
                f"{_show(raw)} lists no {self.what}. Fix: name them (e.g. {self.example}) or "
                "leave the option out."
            )
        if not all(items):
            raise self.refuse(
                f"{_show(raw)} has an empty item (two commas in a row, or a comma at an end). "
                f"Fix: e.g. {self.example}."
            )
        if any(ord(c) < 32 or ord(c) == 127 for c in raw):
            raise self.refuse(f"{_show(raw)} contains control characters. Fix: type the names.")
        twice = next((i for n, i in enumerate(items) if i in items[:n]), None)
        if twice is not None:
            raise self.refuse(f"{_show(twice)} is listed twice in {_show(raw)}. Fix: list it once.")
        return raw


_MEMORY = re.compile(r"^(\d{1,7}(?:\.\d{1,3})?)\s*([KMGT]I?B)$", re.IGNORECASE)
_UNIT_BYTES = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


@dataclass(frozen=True)
class MemorySize(Validator):
    """An amount of memory in DuckDB's spelling (`512MB`, `4GB`, `1.5GiB`), at least 64 MB;
    returns it without spaces, upper case."""

    code: str = "DPX-S008"

    def __call__(self, text: str) -> str:
        raw = str(text).strip()
        m = _MEMORY.match(raw) if len(raw) <= _NUMBER_TEXT_MAX else None
        if m is None:
            raise self.refuse(f"{_show(raw)} is not an amount of memory. Fix: e.g. 512MB or 4GB.")
        amount = float(m.group(1)) * _UNIT_BYTES[m.group(2)[0].upper()]
        if amount < 64 * 2**20:
            raise self.refuse(f"{_show(raw)} is below 64MB. Fix: give at least 64MB.")
        return f"{m.group(1)}{m.group(2).upper()}"


@dataclass(frozen=True)
class Fractions(Validator):
    """A comma-separated list of numbers in (0, 1] (query sizes); returns the text."""

    example: str = "0.02,0.06,0.10"

    def __call__(self, text: str) -> str:
        raw = str(text)
        parts = [p for p in raw.split(",") if p.strip()]
        if not parts or len(parts) > 100:
            raise self.refuse(
                f"expected 1 to 100 fractions, got {_show(raw)}. Fix: {self.example}."
            )
        for part in parts:
            Real(0.0, 1.0, low_open=True, example=self.example)(part)
        return raw


@dataclass(frozen=True)
class BBox(Validator):
    """MINLON,MINLAT,MAXLON,MAXLAT: four finite numbers (order and ranges: the tool)."""

    def __call__(self, text: str) -> str:
        raw = str(text)
        parts = raw.split(",")
        example = "--bbox=-118.6,33.7,-117.9,34.4"
        if len(parts) != 4:
            raise self.refuse(
                f"could not read the bounding box {_show(raw)}: give four numbers "
                f"MINLON,MINLAT,MAXLON,MAXLAT. Fix: e.g. {example}."
            )
        for part in parts:
            Real(-1e6, 1e6, example=example)(part)
        return raw


@dataclass(frozen=True)
class Freqs(Validator):
    """VALUE=COUNT,... with whole counts below 1e15 and at most 100,000 values; returns text."""

    def __call__(self, text: str) -> str:
        raw = str(text)
        if len(raw) > QUERY_MAX:
            raise self.refuse(
                f"the list is {len(raw)} characters long, above {QUERY_MAX}. Fix: pass a table."
            )
        items = [p for p in raw.split(",") if p.strip()]
        if len(items) > 100_000:
            raise self.refuse(f"{len(items)} values, above the limit of 100000. Fix: pass a table.")
        for item in items:
            _, sep, count = item.rpartition("=")
            if sep and not re.fullmatch(r"\s*[-+]?\d{1,15}\s*", count):
                raise self.refuse(
                    f"the count in {_show(item)} is not a whole number below 1e15. "
                    'Fix: e.g. --freqs "x1=12,x2=8".'
                )
        return raw


@dataclass(frozen=True)
class ReleaseId(Validator):
    """A release id (`3` or `#3`)."""

    def __call__(self, text: str) -> int:
        raw = str(text).strip().lstrip("#")
        return Integer(1, 2**63 - 1, example="3")(raw)


# The validators the subcommands use (one instance per meaning).
EPSILON = Real(0.0, EPSILON_MAX, low_open=True, example="--epsilon 1")
# the ε of a release: at least the one floor every tool shares (core.privacy.cost.EPSILON_MIN)
RELEASE_EPSILON = Real(EPSILON_MIN, EPSILON_MAX, example="--epsilon 1")
EPSILON_OR_ZERO = Real(0.0, EPSILON_MAX, example="--budget-epsilon 1")
DELTA = Real(0.0, DELTA_MAX_EXCLUSIVE, high_open=True, example="--delta 1e-5")
RHO = Rational()
SEED = Integer(0, SEED_MAX, example="--seed 1")
GRID = Integer(1, GRID_MAX, example="--grid 64")
SPLIT_ITERATIONS = Integer(1, 64, example="--T 3")
STOP_COUNT = Real(-1e9, 1e9, example="--stop-count 100")
STOP_CELLS = Integer(1, 2**31 - 1, example="--stop-cells 5")
QUERIES = Integer(1, 1_000_000, example="--queries 2000")
REPS = Integer(1, 1000, example="--reps 3")
SMOOTHING = Real(0.0, 1e12, low_open=True, example="--smoothing 20")
QUERY_SIZES = Fractions()
MAX_GROUPS_CONTRIBUTED = Integer(1, MAX_GROUPS, example="--max-groups 1")
TIMEOUT = Real(0.0, TIMEOUT_MAX_S, low_open=True, example="--timeout 60", code="DPX-S008")
INPUT_FILE = InputFile("CSV or Parquet file")
QUERY_FILE = InputFile("UTF-8 text file holding the query", code="DPX-C005")
BACKUP_FILE = InputFile("registry backup file")
TABLE = TableSpec()
OUTPUT_FILE = OutputFile()
OUTPUT_FILE_IN_NEW_DIR = OutputFile(missing_parents=True)  # the writer creates the directory
# Each output's format follows its extension; any other extension is refused with the list.
PUBLISHED_TABLE = OutputFile(missing_parents=True, formats=(".csv",))  # dpx balance: CSV only
LOCATION_RELEASE = OutputFile(formats=(".geojson", ".json", ".csv"))  # GeoJSON, or CSV + sidecar
HTML_REPORT = OutputFile(formats=(".html", ".htm"))
SQL_TEXT = OutputFile(formats=(".sql",))
REGISTRY_BACKUP = OutputFile(formats=(".sqlite", ".sqlite3", ".db"))  # an SQLite file
DIRECTORY = Directory()
MEMORY = MemorySize()
NAME = Text(limit=1000, name=True)  # column, dataset and table names
COLUMNS = NameList("column names", "--columns race,precinct")
CATEGORIES = NameList("values", "--categories a,b,c")
TEXT = Text()
QUERY = Text(limit=QUERY_MAX)
BBOX = BBox()
FREQS = Freqs()
RELEASE_ID = ReleaseId()


def caps(code: str = "") -> tuple[Real, Real]:
    """Per-query caps (ε in (0, 1e9], δ in [0, 1)), with a tool's error code."""
    return (
        Real(0.0, EPSILON_MAX, low_open=True, example="--max-epsilon-per-query 1", code=code,
             label="max_epsilon_per_query"),
        Real(0.0, 1.0, high_open=True, example="--max-delta-per-query 1e-5", code=code,
             label="max_delta_per_query"),
    )  # fmt: skip


def refuse_nested_columns(frame, columns=None) -> None:
    """Refuse, with the column named, a table column holding lists, arrays, maps or structs
    (e.g. a Parquet list column) among `columns` (default: all). `frame` is a pandas DataFrame
    or a pyarrow Schema; raises InputError."""
    from core.errors import InputError

    names = list(frame.names if hasattr(frame, "names") else frame.columns)
    wanted = names if columns is None else [c for c in columns if c in names]
    for name in wanted:
        if _is_nested(frame, name):
            raise InputError(
                f"column '{name}' holds lists or nested values (one value per cell is needed). "
                "Fix: flatten it into plain values, or choose another column."
            )


def _is_nested(frame, name) -> bool:
    if hasattr(frame, "field"):  # a pyarrow schema
        import pyarrow as pa

        t = frame.field(name).type
        return pa.types.is_nested(t)
    series = frame[name]
    if series.dtype != object:
        return str(series.dtype).startswith(("list", "struct", "map"))  # arrow-backed dtypes
    import numpy as np

    sample = series.dropna().head(1000)
    return any(isinstance(v, list | tuple | dict | set | np.ndarray) for v in sample)
