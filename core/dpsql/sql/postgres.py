"""PostgreSQL specifics of the exported staged SQL (`plan.sql("postgres")`, issue 11).

PostgreSQL cannot flatten a column of variable-length arrays: it has no FLATTEN, and
ARRAY_AGG over arrays builds a rectangular 2-D array, refusing per-unit quantile lists of
different lengths ("cannot accumulate arrays of different dimensionality"). The cross-user
quantile list is therefore gathered as text and cast back:

    COALESCE(CAST(STRING_TO_ARRAY(STRING_AGG(NULLIF(ARRAY_TO_STRING(p, ','), ''), ','), ',')
             AS DOUBLE PRECISION[]), CAST(ARRAY[] AS DOUBLE PRECISION[]))

Exact on PostgreSQL 12 and later, whose float8 output is the shortest text that reads back as
the same double (extra_float_digits = 1, the default). The lists hold clamped doubles, never
NULL, NaN or infinities (the export's rows are filtered on `value IS NOT NULL` and clamped).

Rounding: PostgreSQL's ROUND(double precision) rounds halves to even (rint), DuckDB's and
Spark's away from zero, so the integerised sums (ROUND(x * 2^j)) differed by one unit at exact
halves. `round_half_away` rewrites every one-argument ROUND into the exact away-from-zero form
(x - TRUNC(x) is exact in floating point, so no half is misjudged).
Nothing here runs in dpx: it is text for a data owner's own PostgreSQL (tested against a real
server in tests/postgres).
"""

from __future__ import annotations

from sqlglot import exp


def _call(name: str, *args: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this=name, expressions=list(args))


def flatten_lists(column: exp.Expression) -> exp.Expression:
    """All elements of the per-unit arrays in `column`, as one DOUBLE PRECISION[] per group
    (empty, not NULL, for a group without values — as DuckDB's FLATTEN gives)."""
    comma = exp.Literal.string(",")
    array = exp.DataType.build("DOUBLE PRECISION[]", dialect="postgres")
    text = _call("NULLIF", _call("ARRAY_TO_STRING", column, comma), exp.Literal.string(""))
    joined = _call("STRING_AGG", text, comma.copy())
    values = exp.Cast(this=_call("STRING_TO_ARRAY", joined, comma.copy()), to=array)
    return exp.Coalesce(
        this=values, expressions=[exp.Cast(this=exp.Array(expressions=[]), to=array.copy())]
    )


def round_half_away(tree: exp.Expression) -> exp.Expression:
    """`tree` with each ROUND(x) (no digits argument) as
    CASE WHEN ABS(x - TRUNC(x)) >= 0.5 THEN TRUNC(x) + SIGN(x) ELSE TRUNC(x) END."""
    for node in reversed(list(tree.find_all(exp.Round))):  # inner ROUNDs first
        if node.args.get("decimals") is not None:
            continue
        x = node.this

        def trunc(x=x):
            return _call("TRUNC", x.copy())

        far = exp.GTE(
            this=exp.Abs(this=exp.Sub(this=x.copy(), expression=trunc())),
            expression=exp.Literal.number("0.5"),
        )
        away = exp.Add(this=trunc(), expression=_call("SIGN", x.copy()))
        node.replace(exp.Case(ifs=[exp.If(this=far, true=away)], default=trunc()))
    return tree
