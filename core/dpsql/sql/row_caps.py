"""Rows per unit of private tables joined with each other (`core.dpsql.check.amplification`).

When a query joins private relations (on the unit), each private table it reads keeps at most
`RowCap.rows` rows per unit, chosen by the salted sampling key (the same key on DuckDB and
Spark; `random()` in exports). This makes the join's fan-out a public bound: one private row
meets at most that many rows of the other side, whatever the unit's data. Like the C_u
partition sampling it only bounds a unit's own contribution, so it affects bias for units with
more rows, never the privacy guarantee (Tumult Analytics' `join_private` truncates each side
the same way).
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.check.amplification import RowCap
from core.dpsql.sql.expressions import SqlTarget, num
from core.dpsql.sql.sampling_key import sampling_key

KEY = "__dpx_key"
RANK = "__dpx_rank"


def _column(name: str, table: str | None = None) -> exp.Column:
    return exp.column(exp.to_identifier(name, quoted=True), table=table)


def _subquery(select: exp.Select, alias: str) -> exp.Subquery:
    return exp.Subquery(this=select, alias=exp.TableAlias(this=exp.to_identifier(alias)))


def _ranked(cap: RowCap, source: exp.Expression, key: exp.Expression) -> exp.Select:
    """The rows of `source` ranked within their unit by `key`, keeping the first cap.rows."""
    columns = [_column(c) for c in cap.columns]
    keyed = exp.select("*", exp.alias_(key, KEY)).from_(source)
    rank = exp.Window(
        this=exp.RowNumber(),
        partition_by=[_column(cap.uid)],
        order=exp.Order(expressions=[exp.Ordered(this=exp.column(KEY))]),
    )
    ranked = exp.select(*[c.copy() for c in columns], exp.alias_(rank, RANK)).from_(
        _subquery(keyed, "__dpx_keyed")
    )
    return (
        exp.select(*[c.copy() for c in columns])
        .from_(_subquery(ranked, "__dpx_ranked"))
        .where(exp.LTE(this=exp.column(RANK), expression=num(cap.rows)))
    )


def capped_table(cap: RowCap, target: SqlTarget, salt: int) -> exp.Select:
    """SELECT <columns> FROM <table> keeping at most cap.rows rows per unit.

    Executed form: units with at most cap.rows rows keep them all without computing a key (an
    anti-join with the heavier units); only the heavier units' rows are keyed (the salted MD5
    of the unit and the row) and ranked. Exports rank every unit by random()."""
    table = exp.to_table(cap.table)
    if not target.executable:
        return _ranked(cap, table, exp.Rand())
    t = exp.to_table(cap.table, alias="__dpx_t")
    heavy = (
        exp.select(_column(cap.uid))
        .from_(exp.to_table(cap.table))
        .group_by(_column(cap.uid))
        .having(exp.GT(this=exp.Count(this=exp.Star()), expression=num(cap.rows)))
    )
    on = exp.EQ(this=_column(cap.uid, "__dpx_t"), expression=_column(cap.uid, "__dpx_heavy"))
    columns = [_column(c, "__dpx_t") for c in cap.columns]
    light = (
        exp.select(*columns)
        .from_(t.copy())
        .join(_subquery(heavy.copy(), "__dpx_heavy"), on=on.copy(), join_type="ANTI")
    )
    heavy_rows = (
        exp.select(*[c.copy() for c in columns])
        .from_(t.copy())
        .join(_subquery(heavy, "__dpx_heavy"), on=on, join_type="SEMI")
    )
    others = [_column(c) for c in cap.columns if c != cap.uid]
    key = sampling_key([_column(cap.uid), *others], salt)
    kept = _ranked(cap, _subquery(heavy_rows, "__dpx_heavy_rows"), key)
    union = exp.union(light, kept, distinct=False)
    return exp.select(*[_column(c) for c in cap.columns]).from_(_subquery(union, "__dpx_capped"))


def cap_private_tables(
    relation: exp.Select, caps: tuple[RowCap, ...], target: SqlTarget, salt: int
) -> exp.Select:
    """`relation` (FROM, JOINs and the user's CTEs) with every capped private table read
    through `capped_table`, under the name the query gave it."""
    if not caps:
        return relation
    by_name = {c.table.lower(): c for c in caps}

    def swap(node):
        if isinstance(node, exp.Table) and node.name.lower() in by_name and not node.args.get("db"):
            alias = node.alias_or_name
            return exp.Subquery(
                this=capped_table(by_name[node.name.lower()], target, salt),
                alias=exp.TableAlias(this=exp.to_identifier(alias)),
            )
        return node

    return relation.transform(swap)
