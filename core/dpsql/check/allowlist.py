"""The expression language of DP SQL: ONE table of what may be evaluated over the query's rows.

A query's failure is a released bit: if whether DuckDB raises depends on one unit's value, no
noise covers it. So every node of an accepted query is in `ALLOWLIST`, and each entry says why
it cannot raise on any input of its argument types, or how the executed SQL makes it total:

* TOTAL — cannot raise on inputs of its argument types (the types are checked by
  `core.dpsql.check.types`, so DuckDB never inserts an implicit cast that can fail).
* TRY — can raise on some values (overflow, division by zero, out-of-range dates); the executed
  SQL evaluates it inside DuckDB's TRY(...), which turns the error into NULL.
* TRY_CAST — CAST is executed as TRY_CAST: a value that does not convert becomes NULL.
* PATTERN — LIKE/ILIKE: the pattern and ESCAPE are validated string literals, so they raise
  never or always (independent of the data); data-built patterns raise even inside TRY.
* PLAIN_AGG — plain aggregates (in private subqueries grouped by the unit, or over public
  tables); their numeric inputs are summed as DOUBLE (no overflow), and an aggregate used in
  arithmetic is read as TRY_CAST(... AS DOUBLE) (TRY cannot wrap an aggregate).
* STRUCTURE — query structure, names and literals: nothing is computed.

Everything else (bit shifts, SIMILAR TO, GLOB, regexp_*, list/struct/JSON functions, lambdas,
repeat/lpad, random(), table functions, ...) is refused with DPX-A001. The only
data-dependent behaviour left is NULL.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from sqlglot import exp

from core.dpsql.parse.dialect import DPSQL, Clamped, DPClause
from core.errors import InputError

DP_AGGREGATE_NAMES = {
    *(f"ANON_{n}" for n in ("COUNT", "SUM", "AVG", "VAR", "VAR_POP", "STDDEV", "STDDEV_POP")),
    *(f"ANON_{n}" for n in ("NTILE", "PERCENTILE_CONT", "MIN", "MAX", "MEDIAN")),
    "COUNT", "SUM", "AVG", "PERCENTILE_CONT", "VAR_POP", "STDDEV_POP",
}  # fmt: skip


class Totality(Enum):
    STRUCTURE = "nothing is evaluated"
    TOTAL = "cannot raise on inputs of its (checked) argument types"
    TRY = "may raise on some values; executed inside TRY(...), an error becomes NULL"
    TRY_CAST = "executed as TRY_CAST: a value that does not convert becomes NULL"
    PATTERN = "pattern and ESCAPE are validated string literals: raise never or always"
    PLAIN_AGG = "plain aggregate; numeric inputs summed as DOUBLE, used in arithmetic as DOUBLE"
    DP = "DP aggregate, read by the normaliser (bounded, noised)"


@dataclass(frozen=True)
class Entry:
    totality: Totality
    args: str
    why: str


S, T, TRY = Totality.STRUCTURE, Totality.TOTAL, Totality.TRY
_NUM = "numeric"
_ANY = "any, operands of one type family"

ALLOWLIST: dict[type[exp.Expression], Entry] = {
    # structure
    **{
        t: Entry(S, "-", "query structure or a name")
        for t in (
            exp.Select,
            exp.From,
            exp.Join,
            exp.Where,
            exp.Group,
            exp.Having,
            exp.Order,
            exp.Ordered,
            exp.Limit,
            exp.Offset,
            exp.With,
            exp.CTE,
            exp.Subquery,
            exp.Table,
            exp.TableAlias,
            exp.Alias,
            exp.Column,
            exp.Identifier,
            exp.Star,
            exp.Var,
            exp.DataType,
            exp.DataTypeParam,
            exp.Distinct,
            exp.Kwarg,
            exp.Tuple,
            exp.Paren,
            DPClause,
            Clamped,
        )
    },
    **{t: Entry(S, "-", "a constant") for t in (exp.Literal, exp.Null, exp.Boolean)},
    exp.Interval: Entry(S, "literal", "a constant interval (its quantity must be a literal)"),
    exp.Anonymous: Entry(Totality.DP, "DP aggregate arguments", "only DP aggregate names"),
    # logic and comparison: total once both sides are of one type family (typecheck)
    **{
        t: Entry(T, "boolean", "three-valued logic never raises")
        for t in (exp.And, exp.Or, exp.Not)
    },  # noqa: E501
    **{
        t: Entry(T, _ANY, "comparison of one type family needs no cast")
        for t in (
            exp.EQ,
            exp.NEQ,
            exp.GT,
            exp.GTE,
            exp.LT,
            exp.LTE,
            exp.NullSafeEQ,
            exp.NullSafeNEQ,
            exp.Between,
            exp.In,
        )
    },  # fmt: skip
    exp.Is: Entry(T, "any IS NULL / TRUE / FALSE", "a test, never a conversion"),
    exp.Exists: Entry(T, "public subquery", "a test on a public relation"),
    **{
        t: Entry(T, _ANY, "branches of one type family need no cast; conditions are boolean")
        for t in (exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least)
    },
    # arithmetic: overflow, division by zero -> TRY
    **{
        t: Entry(TRY, _NUM + " (or temporal +/- interval)", "integer overflow or division by zero")
        for t in (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Neg, exp.Pow)
    },
    **{
        t: Entry(TRY, _NUM, "abs(min int) and rounding can overflow; the rest yield NaN/inf")
        for t in (
            exp.Abs,
            exp.Ceil,
            exp.Floor,
            exp.Round,
            exp.Sign,
            exp.Sqrt,
            exp.Ln,
            exp.Log,
            exp.Exp,
            exp.IsNan,
            exp.IsInf,
        )
    },  # fmt: skip
    # strings (no repeat/lpad; every result length bounded from declared widths: check/growth.py)
    **{
        t: Entry(TRY, "text, integer positions", "positions out of range")
        for t in (
            exp.Lower,
            exp.Upper,
            exp.Length,
            exp.Substring,
            exp.Trim,
            exp.Concat,
            exp.DPipe,
            exp.ConcatWs,
            exp.Replace,
            exp.Left,
            exp.Right,
            exp.StrPosition,
            exp.StartsWith,
            exp.EndsWith,
            exp.Initcap,
            exp.Reverse,
        )
    },  # fmt: skip
    # dates
    **{
        t: Entry(TRY, "temporal, literal unit", "out-of-range dates")
        for t in (
            exp.Extract,
            exp.DateTrunc,
            exp.TimestampTrunc,
            exp.Year,
            exp.Month,
            exp.Day,
            exp.Quarter,
            exp.Week,
            exp.DayOfWeek,
            exp.DayOfYear,
            exp.Hour,
            exp.Minute,
            exp.Second,
            exp.DateAdd,
            exp.DateSub,
            exp.DateDiff,
            exp.Date,
            exp.TsOrDsToDate,
        )
    },  # fmt: skip
    exp.CurrentDate: Entry(T, "-", "a constant of the run"),
    exp.Cast: Entry(Totality.TRY_CAST, "any", "a failing conversion becomes NULL"),
    exp.TryCast: Entry(T, "any", "a failing conversion is NULL"),
    exp.Try: Entry(T, "any", "an error becomes NULL"),
    exp.Like: Entry(Totality.PATTERN, "text, literal pattern", "validated literal pattern"),
    exp.ILike: Entry(Totality.PATTERN, "text, literal pattern", "validated literal pattern"),
    exp.Escape: Entry(Totality.PATTERN, "one-character literal", "validated escape"),
    **{
        t: Entry(
            Totality.PLAIN_AGG, "any (sums: numeric)", "sums in DOUBLE; counts cannot overflow"
        )
        for t in (
            exp.Sum,
            exp.Count,
            exp.Avg,
            exp.Min,
            exp.Max,
            exp.CountIf,
            exp.LogicalAnd,
            exp.LogicalOr,
        )
    },  # fmt: skip
    # plain forms of DP aggregates: the normaliser refuses them with the DP fix
    **{
        t: Entry(Totality.DP, "-", "refused with a DP fix")
        for t in (exp.VariancePop, exp.StddevPop, exp.PercentileCont)
    },  # noqa: E501
}

ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Neg, exp.Pow)
PLAIN_AGGREGATES = tuple(t for t, e in ALLOWLIST.items() if e.totality is Totality.PLAIN_AGG)
SUBQUERY_OK = (*PLAIN_AGGREGATES, exp.Exists)  # EXISTS tests for rows: it cannot raise


def refuse(code: str, what: str, rule: str, fix: str) -> InputError:
    return InputError(f"DPX-{code} {what}. Rule: {rule}. Fix: {fix}.")


def check_allowlist(tree: exp.Expression) -> None:
    """A001 every node is in ALLOWLIST; A002 LIKE patterns are validated literals; A003 no
    subquery inside arithmetic or a function; A004 no // or % of an aggregate."""
    for node in tree.walk():
        if isinstance(node, (exp.Command, exp.Pragma, exp.Set)):
            raise refuse("S002", "nested command", "only a read-only SELECT", "remove it")
        entry = ALLOWLIST.get(type(node))
        if entry is None:
            raise refuse(
                "A001",
                f"`{_name(node)}` is not in the DP SQL expression language",
                "only operations that cannot raise on any value (or are made total) may be "
                "evaluated, so whether a query fails never depends on private data",
                "use arithmetic, comparisons, CASE/COALESCE, LIKE with a literal pattern, "
                "string and date functions, CAST (run as TRY_CAST) — see the allowlist",
            )
        if isinstance(node, exp.Anonymous) and node.name.upper() not in DP_AGGREGATE_NAMES:
            raise refuse(
                "A001",
                f"function `{node.name.upper()}` is not in the DP SQL expression language",
                "unknown functions could raise on some values or read files",
                "remove it",
            )
        if isinstance(node, exp.Interval) and not isinstance(node.this, (exp.Literal, type(None))):
            raise refuse(
                "A001", "INTERVAL with a computed quantity", "a literal", "write a literal"
            )
        if isinstance(node, (exp.Like, exp.ILike)):
            _check_pattern(node)
        if isinstance(node, ARITHMETIC + (exp.Func,)) and not isinstance(node, SUBQUERY_OK):
            _check_no_subquery_operand(node)
        if _over_plain_aggregate(node, tree):
            raise refuse(
                "A005",
                f"`{_name(node)}` is applied to an aggregate in a subquery",
                "it can raise on some values and TRY cannot wrap an aggregate, so whether the "
                "query fails would depend on private data (arithmetic over aggregates is run "
                "in DOUBLE instead, which cannot raise)",
                "output the aggregate from the subquery and apply the function in the outer "
                "query, e.g. (SELECT uid, MIN(day) AS d FROM t GROUP BY uid) AS s, then abs(s.d)",
            )
        if isinstance(node, (exp.IntDiv, exp.Mod)) and any(
            isinstance(n, exp.AggFunc) for n in node.walk()
        ):
            raise refuse(
                "A004",
                f"`{node.sql(dialect=DPSQL)}` divides an aggregate with // or %",
                "TRY cannot wrap an aggregate and // or % by zero raises",
                "use / (division by zero gives NULL or infinity)",
            )


def _over_plain_aggregate(node: exp.Expression, root: exp.Expression) -> bool:
    """A TRY-class node (not numeric arithmetic, which `totalise` runs in DOUBLE) with a plain
    aggregate below it, inside a subquery (the DP SELECT's own aggregates are released values,
    and functions of them are post-processing)."""
    entry = ALLOWLIST.get(type(node))
    if entry is None or entry.totality is not TRY:
        return False
    if isinstance(node, ARITHMETIC) and not _temporal_operand(node):
        return False
    if not any(isinstance(n, PLAIN_AGGREGATES) for n in node.walk()):
        return False
    return node.find_ancestor(exp.Select) is not root


def _temporal_operand(node: exp.Expression) -> bool:
    return any(isinstance(n, (exp.Interval, exp.DateAdd, exp.DateSub)) for n in node.walk())


def _name(node: exp.Expression) -> str:
    if isinstance(node, exp.Func):
        return node.sql_name() if hasattr(node, "sql_name") else type(node).__name__
    return type(node).__name__


def _check_no_subquery_operand(node: exp.Expression) -> None:
    for arg in node.iter_expressions():
        if isinstance(arg, (exp.Subquery, exp.Select)):
            raise refuse(
                "A003",
                f"a subquery inside `{_name(node)}`",
                "TRY cannot wrap a scalar subquery, so the computation could raise on a value",
                "compare a column with the subquery directly (x = (SELECT ...)) or join the "
                "public table",
            )


def _check_pattern(node: exp.Like | exp.ILike) -> None:
    pattern = node.expression
    escape_node = node.parent.expression if isinstance(node.parent, exp.Escape) else None
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise refuse(
            "A002",
            f"the pattern of `{node.sql(dialect=DPSQL)}` is not a string literal",
            "a pattern built from data can raise (even inside TRY), which would release a bit",
            "write the pattern as a literal, e.g. name LIKE 'A%'",
        )
    if escape_node is None:
        return
    if not (isinstance(escape_node, exp.Literal) and escape_node.is_string):
        raise refuse("A002", "ESCAPE is not a string literal", "a literal", "e.g. ESCAPE '!'")
    esc = escape_node.this
    if len(esc) > 1:
        raise refuse("A002", f"ESCAPE '{esc}' is longer than one character", "one character",
                     "e.g. ESCAPE '!'")  # fmt: skip
    text, i = pattern.this, 0
    while esc and i < len(text):
        if text[i] == esc:
            if i + 1 == len(text):
                raise refuse("A002", f"LIKE pattern '{text}' ends with its escape character",
                             "DuckDB rejects it", "escape a character or remove the escape")  # fmt: skip
            i += 1
        i += 1


# -- making the executed SQL total -------------------------------------------------------------
NOT_ROW_LEVEL = (exp.AggFunc, exp.Query, exp.Subquery, exp.Window, exp.Star)


def safe_double(e: exp.Expression) -> exp.Expression:
    """TRY_CAST(e AS DOUBLE): NULL, not an error, for a value that is not a number."""
    return exp.TryCast(this=e, to=exp.DataType.build("DOUBLE"))


def totalise(tree: exp.Expression) -> exp.Expression:
    """The executed form of user expressions, per the ALLOWLIST's totality column: CAST ->
    TRY_CAST; each outermost TRY entry (constants too) without aggregates or subqueries inside
    TRY(...); SUM/AVG (also DISTINCT) over DOUBLE; an aggregate used in arithmetic read as
    TRY_CAST(... AS DOUBLE), where arithmetic cannot overflow."""

    def fn(node):
        if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
            return exp.TryCast(this=totalise(node.this.copy()), to=node.args["to"].copy())
        if isinstance(node, (exp.Sum, exp.Avg)):
            inner = node.this
            if isinstance(inner, exp.Distinct):
                inner.set("expressions", [_double(e) for e in inner.expressions])
            else:
                node.set("this", _double(inner))
            if isinstance(node.parent, ARITHMETIC):
                return safe_double(totalise(node.copy()))
            return node
        if isinstance(node, ARITHMETIC) and any(
            isinstance(n, PLAIN_AGGREGATES) for n in node.walk()
        ):  # TRY cannot wrap an aggregate: every operand in DOUBLE, which cannot raise
            out = node.copy()
            for key in ("this", "expression"):
                operand = out.args.get(key)
                if operand is not None:
                    out.set(key, _double(totalise(operand)))
            return out
        entry = ALLOWLIST.get(type(node))
        if (
            entry is not None
            and entry.totality is TRY
            and not _negative_number(node)  # constants raise too: 1 // 0 in a CASE branch
            and not any(isinstance(n, NOT_ROW_LEVEL) for n in node.walk())
        ):
            return exp.Try(this=_casts_to_try(node.copy()))
        return node

    return tree.transform(fn)


def _negative_number(node: exp.Expression) -> bool:
    """-<numeric literal>: cannot raise (a literal beyond BIGINT is read as a wider type)."""
    return isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and node.this.is_number


def _casts_to_try(tree: exp.Expression) -> exp.Expression:
    return tree.transform(
        lambda n: (
            exp.TryCast(this=n.this, to=n.args["to"])
            if isinstance(n, exp.Cast) and not isinstance(n, exp.TryCast)
            else n
        )
    )


def _double(e: exp.Expression) -> exp.Expression:
    return e if isinstance(e, exp.TryCast) else safe_double(e)
