"""Small SQL builders shared by the stages and the aggregate kinds (sqlglot expressions).

`SqlTarget` says what the SQL is for: the executed DuckDB/Spark form (user expressions made
total, the salted sampling key) or an export to another dialect (`random()`, wide sums).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from core.dpsql.check.allowlist import safe_double

DIALECTS = ("duckdb", "spark", "bigquery", "postgres")


@dataclass(frozen=True)
class SqlTarget:
    """The dialect of the generated SQL and whether it is the executed form."""

    dialect: str
    executable: bool  # True: executed by the engine (TRY_CAST, salted hash); False: an export
    rows_per_unit: int  # k: rows per unit and partition kept for row-level aggregates

    @property
    def wide(self) -> bool:
        """Other engines sum integers as DECIMAL(38, 0) and gather lists with ARRAY_AGG."""
        return self.dialect != "duckdb"

    def double(self, e: exp.Expression) -> exp.Expression:
        """A value as DOUBLE: executed SQL turns a value that cannot be cast into NULL, never
        a data-dependent error."""
        return safe_double(e) if self.executable else as_double(e)

    def total(self, e: exp.Expression) -> exp.Expression:
        """SUM over units of an integer partial (wide engines: as DECIMAL(38, 0))."""
        if self.wide:
            e = exp.Cast(this=e, to=exp.DataType.build("DECIMAL(38, 0)"))
        return exp.Sum(this=e)


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.column(name, table=table)


def num(value: float | int) -> exp.Expression:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    lit = exp.Literal.number(repr(value) if isinstance(value, float) else value)
    return (
        exp.Neg(this=exp.Literal.number(repr(-value) if isinstance(value, float) else -value))
        if (value < 0)
        else lit
    )


def clamp(e: exp.Expression, low: float, high: float) -> exp.Expression:
    inner = exp.Greatest(this=e, expressions=[num(low)], ignore_nulls=True)
    return exp.Least(this=inner, expressions=[num(high)], ignore_nulls=True)


def null_safe(partial: exp.Expression, value: exp.Expression) -> exp.Expression:
    """CASE WHEN p IS NULL THEN NULL ELSE value END: GREATEST/LEAST skip NULLs on most engines."""
    return exp.Case(
        ifs=[exp.If(this=exp.Is(this=partial.copy(), expression=exp.Null()), true=exp.Null())],
        default=value,
    )


def integerise(e: exp.Expression, exponent: int) -> exp.Expression:
    scaled = e if exponent == 0 else exp.Mul(this=exp.Paren(this=e), expression=num(2.0**exponent))
    return exp.Cast(this=exp.Round(this=scaled), to=exp.DataType.build("BIGINT"))


def as_double(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build("DOUBLE"))


def named(e: exp.Expression, alias: str) -> exp.Expression:
    return exp.alias_(e, alias)
