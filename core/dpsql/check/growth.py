"""The public work bound per value (DPX-V041): how long can any value the query computes be?

A query whose *work* depends on one unit's value leaks that value through a failure: nesting
`REPLACE(s, 'a', s)` three times squares a string's length each time, so with
`IF(uid = 7, 'aaaaaaaaaa', 'b')` only the target's row grows to 10^8 characters and the engine
runs out of memory exactly when the target is present (one bit per query, after the charge).
The amplification rule (V040) bounds rows per private row; this pass bounds the size of each
value, so that bound times the rows is the work per private row.

From public facts only — the declared schema (`TableSchema`: text `max_length`, which reading
enforces by cutting longer values, and every column's `printed_width`), the literals and the
shape of the qualified query — every expression of every scope (private or public) gets an
upper bound on its length in characters as text, bottom-up:

* a column: its declared width (a derived table's column: the bound of its select item);
* a literal: its length; a non-text value (number, date, boolean, interval): `NON_TEXT_WIDTH`,
  the most characters any DuckDB value of those types prints as;
* `||`, CONCAT: the sum of the parts; CONCAT_WS: the parts plus a separator between each two;
* REPLACE(s, a, b): with `a` a non-empty literal, len(s) + (len(s) // len(a)) * max(0, len(b) -
  len(a)); otherwise (len(s) + 1) * (len(b) + 1) (an empty `a` could match everywhere);
* LEFT/RIGHT(s, n): at most len(s), and at most n when n is a literal; SUBSTRING, TRIM,
  REVERSE: at most len(s); UPPER, LOWER, INITCAP: `CASE_GROWTH` * len(s) (full Unicode case
  mapping can lengthen a character; DuckDB's is one-to-one today);
* CASE, IF, COALESCE, NULLIF, GREATEST, LEAST, MIN, MAX, a scalar subquery: the largest branch;
* every other function of the allowlist returns a number, date or boolean: `NON_TEXT_WIDTH`.

A node this table does not know is refused (fail closed), as is any bound over
`MAX_VALUE_CHARACTERS`. The refusal depends on the schema and the query only, never on a row,
so it is the same on neighbouring datasets and charges nothing. The largest bound is recorded
(`WorkBound`) for the engine's memory limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from core.data.declared import (
    BYTES_PER_CHARACTER,
    MAX_TEXT_LENGTH,
    ColumnType,
)
from core.dpsql.catalog import Catalog, TableSpec
from core.dpsql.check.lineage import Lineage
from core.errors import InputError

# The most characters one computed value may have: the widest a column can be declared to hold
# (MAX_TEXT_LENGTH), i.e. 4 MB as UTF-8. Reading, cutting, case-mapping or joining declared
# columns of ordinary widths stays under it; only growth beyond what any column can hold (REPLACE
# with a longer replacement, nested) reaches it. 4 MB is 1/16 of the smallest memory one
# execution is given (64 MB per slot, core.dpsql.execute.pool), so one value cannot exhaust it.
MAX_VALUE_CHARACTERS = MAX_TEXT_LENGTH
# The most characters a non-text DuckDB value prints as: BIGINT 20, HUGEINT/DECIMAL(38) 40,
# DOUBLE 24, a date such as '5877642-06-25 (BC)' 18, timestamps ~32, an interval at most ~70.
NON_TEXT_WIDTH = 96
CASE_GROWTH = 3  # Unicode full case mapping maps one character to at most three

_TEXT = exp.DataType.TEXT_TYPES
_SAME = (exp.Alias, exp.Paren, exp.Ordered, exp.Try, exp.Substring, exp.Trim, exp.Reverse)
_CASE_MAPPED = (exp.Upper, exp.Lower, exp.Initcap)
_LARGEST = (exp.Coalesce, exp.Greatest, exp.Least, exp.Tuple, exp.Distinct, exp.Kwarg)
_NOT_VALUES = (exp.Star, exp.Identifier, exp.Var, exp.DataType, exp.DataTypeParam, exp.Null)
_NON_TEXT = (
    exp.Connector, exp.Not, exp.Predicate, exp.Binary, exp.Neg, exp.Interval, exp.Anonymous,
    exp.Abs, exp.Ceil, exp.Floor, exp.Round, exp.Sign, exp.Sqrt, exp.Ln, exp.Log, exp.Exp,
    exp.IsNan, exp.IsInf, exp.Length, exp.StrPosition, exp.StartsWith, exp.EndsWith,
    exp.Extract, exp.DateTrunc, exp.TimestampTrunc, exp.Year, exp.Month, exp.Day, exp.Quarter,
    exp.Week, exp.DayOfWeek, exp.DayOfYear, exp.Hour, exp.Minute, exp.Second, exp.DateAdd,
    exp.DateSub, exp.DateDiff, exp.Date, exp.TsOrDsToDate, exp.CurrentDate, exp.Boolean,
    exp.Sum, exp.Count, exp.Avg, exp.CountIf, exp.LogicalAnd, exp.LogicalOr, exp.VariancePop,
    exp.StddevPop, exp.PercentileCont, exp.Exists, exp.Escape,
)  # fmt: skip


@dataclass(frozen=True)
class WorkBound:
    """The public bound on the size of any one value the query computes (characters, and bytes
    as UTF-8), and the expression that reaches it. With V040's rows per private row, this is
    what the engine's memory limit can be set from."""

    max_value_chars: int
    expression: str = ""

    @property
    def max_value_bytes(self) -> int:
        return self.max_value_chars * BYTES_PER_CHARACTER


class _Refused(Exception):
    def __init__(self, node: exp.Expression, bound: int | None, scope: Scope | None = None):
        self.node, self.bound, self.scope = node, bound, scope


def column_widths(spec: TableSpec) -> dict[str, int]:
    """{column (lower case): most characters its value prints as}, from the table's schema
    (`spec.schema`: declared for a registered dataset; inferred and labelled for a frame given
    directly, where text is measured — owner mode only). Reading cuts text to that width."""
    return {c.name.lower(): _declared_width(c) for c in spec.schema.columns}


def _is_text(spec: TableSpec | None, column: str) -> bool:
    if spec is None:
        return False
    fact = spec.schema.column(column)
    return fact is not None and fact.type is ColumnType.TEXT


def _declared_width(fact) -> int:
    if fact.type is ColumnType.TEXT or fact.categories is not None:
        return int(fact.printed_width)
    return max(int(fact.printed_width), NON_TEXT_WIDTH)


class Bounder:
    """Bounds every expression of every scope of a qualified query (memoised per node)."""

    def __init__(self, lineage: Lineage, catalog: Catalog):
        self.catalog = catalog
        self.scopes = {id(s.expression): s for s in lineage.root.traverse()}
        self.root = lineage.root
        self._memo: dict[int, int] = {}
        self._tables: dict[str, dict[str, int]] = {}
        self.largest = WorkBound(0)

    def all_scopes(self) -> None:
        for scope in self.root.traverse():
            select = scope.expression
            if not isinstance(select, exp.Select):
                continue
            roots = list(select.expressions)
            for key in ("where", "having"):
                if select.args.get(key) is not None:
                    roots.append(select.args[key].this)
            for key in ("group", "order"):
                if select.args.get(key) is not None:
                    roots.extend(select.args[key].expressions)
            roots.extend(j.args["on"] for j in select.args.get("joins") or [] if j.args.get("on"))
            for node in roots:
                self.width(node, scope)

    def width(self, node: exp.Expression, scope: Scope) -> int:
        key = id(node)
        if key not in self._memo:
            bound = self._width(node, scope)
            if bound > MAX_VALUE_CHARACTERS:
                raise _Refused(node, bound, scope)
            self._memo[key] = bound
            if bound > self.largest.max_value_chars:
                self.largest = WorkBound(bound, _shown(node))
        return self._memo[key]

    def _width(self, node: exp.Expression, scope: Scope) -> int:
        w = lambda e: 0 if e is None else self.width(e, scope)  # noqa: E731
        if isinstance(node, exp.Column):
            return self.column(node, scope)
        if isinstance(node, exp.Literal):
            return len(node.this) if node.is_string else len(node.this) + NON_TEXT_WIDTH
        if isinstance(node, exp.ConcatWs):  # a subclass of Concat: first
            separator, *parts = node.expressions
            return sum(w(e) for e in parts) + w(separator) * max(0, len(parts) - 1)
        if isinstance(node, (exp.DPipe, exp.Concat)):
            return sum(w(e) for e in node.iter_expressions())
        if isinstance(node, exp.Replace):
            return _replaced(w(node.this), node.expression, w(node.expression),
                             w(node.args.get("replacement")))  # fmt: skip
        if isinstance(node, (exp.Left, exp.Right)):
            n, length = node.expression, w(node.this)
            w(n)
            if isinstance(n, exp.Literal) and n.is_int and int(n.this) >= 0:
                return min(length, int(n.this))
            return length
        if isinstance(node, _CASE_MAPPED):
            for e in node.iter_expressions():
                w(e)
            return CASE_GROWTH * w(node.this)
        if isinstance(node, _SAME):
            for e in node.iter_expressions():
                w(e)
            return w(node.this)
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return self._cast(node, w(node.this))
        if isinstance(node, (exp.Case, exp.If)):
            return self._branches(node, scope)
        if isinstance(node, (exp.Nullif, exp.Min, exp.Max)):
            for e in node.iter_expressions():
                w(e)
            return w(node.this)
        if isinstance(node, _LARGEST):
            return max((w(e) for e in node.iter_expressions()), default=0)
        if isinstance(node, (exp.Subquery, exp.Select)):
            return self.subquery(node)
        if isinstance(node, _NOT_VALUES):
            return 0
        if isinstance(node, _NON_TEXT):
            for e in node.iter_expressions():
                w(e)
            return NON_TEXT_WIDTH
        raise _Refused(node, None)  # a node the table does not know: fail closed

    def _cast(self, node: exp.Expression, source: int) -> int:
        to = node.args.get("to")
        kind = to.this if isinstance(to, exp.DataType) else None
        if kind in _TEXT:
            return source
        if kind in exp.DataType.NUMERIC_TYPES or kind in exp.DataType.TEMPORAL_TYPES or kind in (
            exp.DataType.Type.BOOLEAN, exp.DataType.Type.INTERVAL
        ):  # fmt: skip
            return NON_TEXT_WIDTH
        raise _Refused(node, None)

    def _branches(self, node: exp.Expression, scope: Scope) -> int:
        """CASE [x] WHEN c THEN v ... ELSE d / IF(c, v, d): conditions bounded, the largest
        value returned."""
        if isinstance(node, exp.If):
            self.width(node.this, scope)
            values = [node.args.get("true"), node.args.get("false")]
        else:
            if node.this is not None:
                self.width(node.this, scope)
            values = [node.args.get("default")]
            for when in node.args.get("ifs") or []:
                self.width(when.this, scope)
                values.append(when.args.get("true"))
        return max((self.width(v, scope) for v in values if v is not None), default=0)

    def column(self, column: exp.Column, scope: Scope) -> int:
        name = column.name.lower()
        found: Scope | None = scope
        while found is not None and column.table not in found.sources:
            found = found.parent  # a correlated reference to an outer scope
        if not column.table or found is None:
            select = scope.expression
            if isinstance(select, exp.Select):  # an output alias (ORDER BY n, HAVING n > 1)
                for item in select.expressions:
                    if item.alias_or_name.lower() == name and item is not column:
                        return self.width(item, scope)
            raise _Refused(column, None)
        source = found.sources[column.table]
        if isinstance(source, exp.Table):
            widths = self.table(source.name)
            if name not in widths:
                raise _Refused(column, None)
            return widths[name]
        return self.output(source, name, column)

    def table(self, name: str) -> dict[str, int]:
        key = name.lower()
        if key not in self._tables:
            spec = self.catalog.get(name)
            self._tables[key] = {} if spec is None else column_widths(spec)
        return self._tables[key]

    def output(self, scope: Scope, name: str, where: exp.Expression) -> int:
        """The bound of output column `name` of a derived table, CTE or set operation."""
        first = scope
        while isinstance(first.expression, exp.SetOperation) and first.set_operation_scopes:
            first = first.set_operation_scopes[0]
        if not isinstance(first.expression, exp.Select):
            raise _Refused(where, None)
        names = [e.alias_or_name.lower() for e in first.expression.expressions]
        if name not in names:
            raise _Refused(where, None)
        return self.at(scope, names.index(name), where)

    def at(self, scope: Scope, index: int, where: exp.Expression) -> int:
        if isinstance(scope.expression, exp.SetOperation):
            return max(self.at(s, index, where) for s in scope.set_operation_scopes)
        items = scope.expression.expressions if isinstance(scope.expression, exp.Select) else []
        if index >= len(items):
            raise _Refused(where, None)
        return self.width(items[index], scope)

    def base_columns(self, node: exp.Expression, scope: Scope, depth: int = 0) -> set[str]:
        """The declared text columns (table.column) `node` reads, through derived tables."""
        out: set[str] = set()
        for column in node.find_all(exp.Column) if depth < 32 else ():
            source = scope.sources.get(column.table)
            if isinstance(source, exp.Table):
                spec = self.catalog.get(source.name)
                if _is_text(spec, column.name):
                    out.add(f"{spec.name}.{column.name}")
            elif isinstance(source, Scope) and isinstance(source.expression, exp.Select):
                for item in source.expression.expressions:
                    if item.alias_or_name.lower() == column.name.lower():
                        out |= self.base_columns(item, source, depth + 1)
        return out

    def subquery(self, node: exp.Expression) -> int:
        inner = node.this if isinstance(node, exp.Subquery) else node
        scope = self.scopes.get(id(inner))
        if scope is None:
            raise _Refused(node, None)
        return self.at(scope, 0, node)


def _replaced(length: int, pattern: exp.Expression, pattern_width: int, replacement: int) -> int:
    """REPLACE(s, a, b): each match of a non-empty literal `a` removes len(a) characters and
    adds len(b); anything else is bounded as if `a` were empty and matched everywhere."""
    if isinstance(pattern, exp.Literal) and pattern.is_string and pattern.this:
        a = len(pattern.this)
        return length + (length // a) * max(0, replacement - a)
    return (length + 1) * (replacement + 1)


def _shown(node: exp.Expression, limit: int = 80) -> str:
    """The expression as the user wrote it (without the qualifier's table prefixes), cut."""
    plain = node.copy()
    if isinstance(plain, exp.Alias):
        plain = plain.this
    plain = plain.transform(
        lambda n: exp.column(n.name) if isinstance(n, exp.Column) and n.table else n
    )
    text = " ".join(plain.sql(dialect="duckdb").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_growth(lineage: Lineage, catalog: Catalog) -> WorkBound:
    """V041: every value the query computes, in every scope, is at most MAX_VALUE_CHARACTERS
    characters, bounded from the declared schema and the query text (see module docstring)."""
    bounder = Bounder(lineage, catalog)
    try:
        bounder.all_scopes()
    except _Refused as refused:
        columns = (
            bounder.base_columns(refused.node, refused.scope) if refused.scope else set()
        )
        raise _refusal(refused, sorted(columns)) from None
    except RecursionError:
        raise InputError(
            "DPX-V041 the query is nested too deeply to bound the size of its values. Rule: "
            "every value's size is bounded from the declared schema before any data is read. "
            "Fix: write a flatter expression."
        ) from None
    return bounder.largest


def _refusal(refused: _Refused, columns: list[str]) -> InputError:
    shown = _shown(refused.node)
    owner = (
        f", or the data owner declares a smaller max length for {', '.join(columns[:3])} "
        "(`dpx dataset schema`)"
        if columns
        else ""
    )
    if refused.bound is None:
        what = f"the size of `{shown}` cannot be bounded from the declared schema"
        fix = "use the string functions of the allowlist on declared columns"
    else:
        what = (
            f"`{shown}` can be up to {refused.bound:,} characters per row, over the limit of "
            f"{MAX_VALUE_CHARACTERS:,} characters per value"
        )
        fix = f"cut the text first with LEFT(s, n) or replace with a shorter text{owner}"
    return InputError(
        f"DPX-V041 {what}. Rule: the work per private row is bounded from the declared schema "
        f"before any data is read, so whether the query runs out of memory never depends on one "
        f"person's row. Fix: {fix}."
    )


