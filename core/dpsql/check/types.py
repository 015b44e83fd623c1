"""Type the query against the catalogue schema so DuckDB never inserts a cast that can fail.

DuckDB converts operands implicitly when their types differ: `IF(uid = 7, 'x', '0') = 0` casts
the text to a number at run time, which raises for 'x' — for one unit only, which releases a
bit. With sqlglot's type annotation (schema from the catalogue, `lineage.catalog_schema`)
every operand gets a type family; operands that meet in a comparison, IN list, BETWEEN, CASE
branch, COALESCE/GREATEST/LEAST, arithmetic or a condition must be of one family, or the query
is refused (DPX-A010) with the fix: convert explicitly with TRY_CAST (which cannot fail).

Casts between types of one family (INT vs DOUBLE vs DECIMAL, DATE vs TIMESTAMP) never fail.
A text *literal* may meet a temporal value (DuckDB converts the constant once, before reading
data, so it fails for every dataset or none). An operand whose type cannot be inferred is
refused too (fail closed).
"""

from __future__ import annotations

import threading
from enum import Enum
from functools import lru_cache

import duckdb
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types

from core.dpsql.check.allowlist import DP_AGGREGATE_NAMES, refuse
from core.dpsql.parse.dialect import DPSQL

DT = exp.DataType.Type


class Family(Enum):
    NUMBER = "number"
    TEXT = "text"
    TEMPORAL = "date/time"
    INTERVAL = "interval"
    BOOLEAN = "boolean"
    NULL = "NULL"
    UNKNOWN = "unknown"


_TEMPORAL = {DT.DATE, DT.DATETIME, DT.TIMESTAMP, DT.TIMESTAMPTZ, DT.TIMESTAMPLTZ, DT.TIME,
             DT.TIMETZ, DT.TIMESTAMP_S, DT.TIMESTAMP_MS, DT.TIMESTAMP_NS, DT.TIMESTAMPNTZ}  # fmt: skip


def family(node: exp.Expression) -> Family:
    if isinstance(node, exp.Null):
        return Family.NULL
    if isinstance(node, (exp.Subquery, exp.Select)):
        select = node.this if isinstance(node, exp.Subquery) else node
        if isinstance(select, exp.Select) and len(select.expressions) == 1:
            return family(select.expressions[0])
        return Family.UNKNOWN
    if isinstance(node, exp.Paren):
        return family(node.this)
    if isinstance(node, exp.Anonymous) and node.name.upper() == "CLAMPED":
        return family(node.expressions[0])
    if isinstance(node, exp.Anonymous) and node.name.upper() in DP_AGGREGATE_NAMES:
        return Family.NUMBER  # every DP aggregate releases a number
    t = node.type
    if t is None:
        return Family.UNKNOWN
    kind = t.this
    if kind in exp.DataType.NUMERIC_TYPES:
        return Family.NUMBER
    if kind in exp.DataType.TEXT_TYPES:
        return Family.TEXT
    if kind in _TEMPORAL:
        return Family.TEMPORAL
    if kind == DT.INTERVAL:
        return Family.INTERVAL
    if kind == DT.BOOLEAN:
        return Family.BOOLEAN
    if kind == DT.NULL:
        return Family.NULL
    return Family.UNKNOWN


def _is_text_literal(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _compatible(nodes: list[exp.Expression]) -> bool:
    fams = [(n, family(n)) for n in nodes]
    real = [(n, f) for n, f in fams if f is not Family.NULL]
    if any(f is Family.UNKNOWN for _, f in real):
        return False
    kinds = {f for _, f in real}
    if len(kinds) <= 1:
        return True
    if kinds == {Family.TEXT, Family.TEMPORAL}:  # text literals meeting dates: a constant cast
        texts = [n for n, f in real if f is Family.TEXT]
        if not all(_is_text_literal(n) for n in texts):
            return False
        targets = {n.type.sql(dialect="duckdb") for n, f in real if f is Family.TEMPORAL}
        _check_temporal_literals(texts, targets)
        return True
    return False


def _check_temporal_literals(texts: list[exp.Expression], targets: set[str]) -> None:
    """A012: a text literal meeting a date/time operand must convert to every temporal type it
    meets. DuckDB converts it only when the row needs it (COALESCE(d, 'x') converts 'x' only
    for a NULL d), so an invalid literal would fail for some rows only: one unit's data would
    decide whether the query fails. The check converts the constant, never data."""
    for lit in texts:
        for target in sorted(targets):
            if not _converts(lit.this, target):
                raise refuse(
                    "A012",
                    f"the text literal '{lit.this[:40]}' is not a valid {target}",
                    "a text literal meeting a date/time value is converted only on the rows "
                    "that need it, so an invalid one would fail depending on private data",
                    f"write a valid {target} literal, e.g. {target} '2024-01-31'",
                )


@lru_cache(maxsize=4096)
def _converts(text: str, target: str) -> bool:
    """Whether DuckDB converts the constant `text` to `target` (a scratch connection, no data)."""
    with _SCRATCH_LOCK:  # one connection, used by one thread at a time (the page is threaded)
        try:
            sql = f"SELECT TRY_CAST(? AS {target}) IS NOT NULL"
            return bool(_scratch().execute(sql, [text]).fetchone()[0])
        except duckdb.Error:
            return False


_SCRATCH_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _scratch() -> duckdb.DuckDBPyConnection:
    return duckdb.connect(":memory:")


def _mismatch(node: exp.Expression, parts: list[exp.Expression]):
    fams = ", ".join(f"`{p.sql(dialect=DPSQL)[:40]}`: {family(p).value}" for p in parts)
    return refuse(
        "A010",
        f"`{node.sql(dialect=DPSQL)[:120]}` mixes types ({fams})",
        "DuckDB would convert one side implicitly, and a conversion that fails on some value "
        "would make the query's failure depend on private data",
        "convert explicitly, e.g. TRY_CAST(x AS VARCHAR) or TRY_CAST(x AS DOUBLE) (NULL when "
        "it does not convert)",
    )


_COMPARE = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)
_BRANCHES = (exp.Coalesce, exp.Greatest, exp.Least, exp.Nullif)
_ARITH = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod, exp.Pow)


def check_types(qualified: exp.Select, schema: dict[str, dict[str, str]]) -> None:
    """A010 on the qualified copy of the query (see module docstring). A011: a WHERE, ON,
    HAVING, CASE WHEN or AND/OR/NOT operand that is not boolean (a cast to boolean can fail)."""
    try:
        typed = annotate_types(qualified, schema=schema, dialect="duckdb")
    except (SqlglotError, KeyError, ValueError, TypeError) as err:
        raise refuse("A010", f"the query cannot be typed ({str(err)[:120]})", "every operand "
                     "needs a known type", "convert with TRY_CAST") from None  # fmt: skip
    for node in typed.walk():
        parts: list[exp.Expression] = []
        if isinstance(node, _COMPARE):
            parts = [node.this, node.expression]
        elif isinstance(node, exp.Between):
            parts = [node.this, node.args["low"], node.args["high"]]
        elif isinstance(node, exp.In):
            query = node.args.get("query")
            parts = [node.this, *(node.expressions or []), *([query] if query else [])]
        elif isinstance(node, _BRANCHES):
            parts = [node.this, *node.expressions] if node.this else list(node.expressions)
            if isinstance(node, exp.Nullif):
                parts = [node.this, node.expression]
        elif isinstance(node, exp.Case):
            parts = [i.args["true"] for i in node.args.get("ifs") or []]
            parts += [node.args["default"]] if node.args.get("default") else []
            if node.this is not None:  # CASE x WHEN v ...
                _need([node.this, *[i.this for i in node.args.get("ifs") or []]], node)
            else:
                _need_boolean([i.this for i in node.args.get("ifs") or []], node)
        elif isinstance(node, exp.If):
            parts = [node.args["true"], *([node.args["false"]] if node.args.get("false") else [])]
            _need_boolean([node.this], node)
        elif isinstance(node, _ARITH):
            _check_arithmetic(node)
        elif isinstance(node, exp.Neg):
            _need_number([node.this], node)
        elif isinstance(node, (exp.And, exp.Or)):
            _need_boolean([node.this, node.expression], node)
        elif isinstance(node, exp.Is) and isinstance(node.expression, exp.Boolean):
            _need_boolean([node.this], node)  # x IS TRUE casts x to boolean
        elif isinstance(node, (exp.Not, exp.Where, exp.Having)):
            _need_boolean([node.this], node)
        elif isinstance(node, exp.Join) and node.args.get("on") is not None:
            _need_boolean([node.args["on"]], node)
        if parts:
            _need(parts, node)


def _need(parts: list[exp.Expression], node: exp.Expression) -> None:
    if not _compatible(parts):
        raise _mismatch(node, parts)


def _need_boolean(parts: list[exp.Expression], node: exp.Expression) -> None:
    for p in parts:
        if family(p) not in (Family.BOOLEAN, Family.NULL):
            raise refuse(
                "A011",
                f"`{p.sql(dialect=DPSQL)[:80]}` is used as a condition but is {family(p).value}",
                "a conversion to boolean can fail on some values",
                "write a comparison, e.g. x <> 0 or x = 'yes'",
            )


def _need_number(parts: list[exp.Expression], node: exp.Expression) -> None:
    for p in parts:
        if family(p) not in (Family.NUMBER, Family.NULL):
            raise _mismatch(node, parts)


def _check_arithmetic(node: exp.Expression) -> None:
    a, b = family(node.this), family(node.expression)
    if {a, b} <= {Family.NUMBER, Family.NULL}:
        return
    temporal_ok = isinstance(node, (exp.Add, exp.Sub)) and (
        {a, b} <= {Family.TEMPORAL, Family.INTERVAL, Family.NULL}
        or (a is Family.TEMPORAL and b is Family.NUMBER)
        or (isinstance(node, exp.Add) and b is Family.TEMPORAL and a is Family.NUMBER)
    )
    if not temporal_ok:
        raise _mismatch(node, [node.this, node.expression])
