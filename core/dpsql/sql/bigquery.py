"""Re-emit a DP query in BigQuery's `SELECT WITH DIFFERENTIAL_PRIVACY` syntax (spec §4.4).

Distinct from transpiling the staged SQL: BigQuery applies its own rewrite, noise, split and
thresholding, so its numbers will differ. Built from the IR; reads no data, charges nothing.
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.aggregates.base import bigquery_number
from core.dpsql.aggregates.kinds import kind_class
from core.dpsql.parse.dialect import DPSQL, DPClause
from core.dpsql.parse.ir import DPAggregate, DPQuery


def _num(x: float) -> exp.Expression:
    return bigquery_number(x)


def _call(agg: DPAggregate, warnings: list[str]) -> exp.Expression:
    call = kind_class(agg.kind).bigquery_call(agg, warnings)
    if agg.weight != 1:
        warnings.append(f"weight => {agg.weight:g} has no BigQuery equivalent (dropped).")
    return call


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
