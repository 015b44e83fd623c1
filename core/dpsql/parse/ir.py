"""The internal representation both query forms normalise to (spec §1.5).

Everything after parsing (validator, rewriter, explain, release, ledger) reads only these
frozen dataclasses, so the paper form and the ZetaSQL form behave identically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from sqlglot import exp

Form = Literal["ANONYMIZATION", "DIFFERENTIAL_PRIVACY"]

# Internal column names of the released table start with this prefix; user names may not.
RESERVED_PREFIX = "__dpx_"
ROW_ID = f"{RESERVED_PREFIX}row"  # released-table column that keeps rows and intervals aligned


class AggKind(StrEnum):
    """The DP aggregate kinds of spec §1.3 (a StrEnum: `AggKind.SUM == "SUM"`)."""

    COUNT_UNITS = "COUNT_UNITS"
    COUNT_ROWS = "COUNT_ROWS"
    COUNT_VALUES = "COUNT_VALUES"
    SUM = "SUM"
    AVG = "AVG"
    VAR = "VAR"
    STDDEV = "STDDEV"
    QUANTILE = "QUANTILE"
    IMPLICIT_COUNT_ROWS = "IMPLICIT_COUNT_ROWS"  # COUNT(*) without bounds (ZetaSQL: implicit)
    IMPLICIT_COUNT_VALUES = "IMPLICIT_COUNT_VALUES"  # COUNT(x) without bounds


@dataclass(frozen=True)
class SourceSpan:
    """Where an item was written, so later errors can point at the user's text."""

    line: int | None
    column: int | None
    text: str


class NoiseKind(StrEnum):
    """The noise of a query's counts and sums (OPTIONS noise = ..., `dpx sql --noise`)."""

    LAPLACE = "laplace"  # discrete Laplace, L1 sensitivity C_u·Δ (pure ε; the default)
    GAUSSIAN = "gaussian"  # discrete Gaussian, L2 sensitivity √C_u·Δ (needs δ > 0)


@dataclass(frozen=True)
class DPOptions:
    epsilon: float
    delta: float
    max_groups_contributed: int
    privacy_unit_column: str | None = None
    max_rows_per_group: int = 5
    threshold_weight: float = 1.0
    quantile_grid_size: int = 1001
    min_privacy_units_per_group: int | None = None
    public_groups: bool = False
    noise: NoiseKind = NoiseKind.LAPLACE
    # set by the planner, not by the user: the δ of each Gaussian statistic
    # (`core.dpsql.plan.budget_split.split_delta`)
    gaussian_delta: float = 0.0


@dataclass(frozen=True)
class DPAggregate:
    kind: AggKind
    arg: exp.Expression | None
    lower: float | None
    upper: float | None
    clamp: Literal["group", "row", "none", "implicit"]
    p: float | None
    weight: float
    alias: str
    span: SourceSpan

    def __post_init__(self):
        object.__setattr__(self, "kind", AggKind(self.kind))  # normalisers may pass the name

    @property
    def signature(self) -> tuple:
        """Identical calls share one computation and one budget share (spec §1.3)."""
        arg = self.arg.sql(dialect="duckdb") if self.arg is not None else "*"
        return (self.kind, arg, self.lower, self.upper, self.p, self.weight)


@dataclass(frozen=True)
class OutputItem:
    """One select-list column: a key, a bare aggregate, or an expression over them."""

    name: str
    expression: exp.Expression  # over key columns k<i> and aggregate columns v<j>
    key_index: int | None = None
    aggregate_index: int | None = None


@dataclass(frozen=True)
class PostProcessing:
    having: exp.Expression | None = None
    order: exp.Expression | None = None
    limit: exp.Expression | None = None


@dataclass(frozen=True)
class DPQuery:
    form: Form
    options: DPOptions
    keys: list[exp.Expression]
    key_names: list[str]
    aggregates: list[DPAggregate]
    outputs: list[OutputItem]
    relation: exp.Select  # SELECT-less shell holding FROM, JOINs and leading CTEs
    where: exp.Expression | None
    post: PostProcessing = field(default_factory=PostProcessing)
    text: str = ""
