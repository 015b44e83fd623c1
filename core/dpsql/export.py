"""Re-emit a DP query in BigQuery's `SELECT WITH DIFFERENTIAL_PRIVACY` syntax (spec §4.4).

Distinct from transpiling the staged SQL: BigQuery applies its own rewrite, noise, split and
thresholding, so its numbers will differ. Built from the IR; reads no data, charges nothing.
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.dialect import DPSQL, DPClause
from core.dpsql.ir import DPAggregate, DPQuery


def _num(x: float) -> exp.Expression:
    value = int(x) if float(x).is_integer() else float(x)
    lit = exp.Literal.number(abs(value))
    return exp.Neg(this=lit) if value < 0 else lit


def _bounds(name: str, lo: float, hi: float) -> exp.Kwarg:
    return exp.Kwarg(this=exp.var(name), expression=exp.Tuple(expressions=[_num(lo), _num(hi)]))


def _call(agg: DPAggregate, warnings: list[str]) -> exp.Expression:
    group, row = "contribution_bounds_per_group", "contribution_bounds_per_row"
    arg = agg.arg.copy() if agg.arg is not None else exp.Star()
    if agg.kind == "COUNT_UNITS":
        args = [exp.Star(), _bounds(group, 0, 1)]
        name = "COUNT"
    elif agg.kind in ("COUNT_ROWS", "COUNT_VALUES"):
        args, name = [arg, _bounds(group, agg.lower, agg.upper)], "COUNT"
    elif agg.kind in ("SUM", "AVG"):
        args, name = [arg, _bounds(group, agg.lower, agg.upper)], agg.kind
    elif agg.kind in ("VAR", "STDDEV"):
        name = "VAR_POP" if agg.kind == "VAR" else "STDDEV_POP"
        args = [arg, _bounds(row, agg.lower, agg.upper)]
        warnings.append(
            f"{name} exists in ZetaSQL but BigQuery documents only AVG, COUNT, "
            "PERCENTILE_CONT and SUM."
        )
    else:
        name = "PERCENTILE_CONT"
        args = [arg, _num(agg.p), _bounds(row, agg.lower, agg.upper)]
    if agg.weight != 1:
        warnings.append(f"weight => {agg.weight:g} has no BigQuery equivalent (dropped).")
    return exp.Anonymous(this=name, expressions=args)


def to_bigquery(query: DPQuery, uid: str) -> tuple[str, list[str]]:
    """The query in BigQuery's DP syntax plus warnings about what does not carry over."""
    warnings: list[str] = []
    o = query.options
    if o.max_rows_per_group != 5:
        warnings.append("max_rows_per_group has no BigQuery equivalent (BigQuery uses 5).")
    if o.threshold_weight != 1:
        warnings.append("threshold_weight has no BigQuery equivalent (dropped).")
    calls = [_call(a, warnings) for a in query.aggregates]

    def restore(node):
        if isinstance(node, exp.Column) and not node.table and node.name[:1] in "kv":
            index = node.name[1:]
            if index.isdigit():
                i = int(index)
                return (query.keys[i] if node.name[0] == "k" else calls[i]).copy()
        return node

    items = [exp.alias_(o_.expression.copy().transform(restore), o_.name) for o_ in query.outputs]
    options = [
        exp.EQ(this=exp.column("epsilon"), expression=_num(o.epsilon)),
        exp.EQ(this=exp.column("delta"), expression=exp.Literal.number(repr(o.delta))),
        exp.EQ(
            this=exp.column("max_groups_contributed"), expression=_num(o.max_groups_contributed)
        ),
        exp.EQ(this=exp.column("privacy_unit_column"), expression=exp.column(uid)),
    ]
    select = query.relation.copy()
    select.set("hint", DPClause(kind="DIFFERENTIAL_PRIVACY", expressions=options))
    select.set("expressions", items)
    if query.where is not None:
        select.set("where", exp.Where(this=query.where.copy()))
    if query.keys:
        select.set("group", exp.Group(expressions=[k.copy() for k in query.keys]))
    post = query.post
    if post.having is not None:
        select.set("having", exp.Having(this=post.having.copy().transform(restore)))
    if post.order is not None:
        select.set("order", post.order.copy().transform(restore))
    if post.limit is not None:
        select.set("limit", post.limit.copy())
    return select.sql(dialect=DPSQL, pretty=True), warnings
