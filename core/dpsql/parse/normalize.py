"""Normalise a parsed DP SELECT (either form) into the `DPQuery` IR: keys, outputs, HAVING,
ORDER BY and LIMIT. Options are read by `option_reader`, aggregate calls by `aggregates`.

Each refusal is an `InputError` with a code (spec §6), the rule broken and how to fix the query.
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.parse.calls import AggregateReader
from core.dpsql.parse.calls import where_text as _where
from core.dpsql.parse.dialect import DPSQL
from core.dpsql.parse.ir import DPAggregate, DPQuery, OutputItem, PostProcessing
from core.dpsql.parse.options import OPTION_NAMES, read_options  # noqa: F401
from core.errors import InputError


# -- the whole query ---------------------------------------------------------------------------
def normalize(select: exp.Select, uid_names: set[str], defaults: dict, text: str = "") -> DPQuery:
    """Build the IR of a top-level DP SELECT (the statement gate has already run)."""
    clause = select.args.get("hint")
    form = clause.args["kind"]
    options = read_options(clause, defaults)
    if options.privacy_unit_column is not None and options.privacy_unit_column.lower() not in {
        u.lower() for u in uid_names
    }:
        raise InputError(
            f"DPX-V014 privacy_unit_column = {options.privacy_unit_column} is not the declared "
            f"privacy unit ({', '.join(sorted(uid_names))}). Fix: name the declared unit column."
        )
    reader = AggregateReader(form, uid_names)
    uids = {u.lower() for u in uid_names}
    _reject_unsupported_clauses(select)

    where = select.args.get("where")
    in_where = where.this.walk(prune=lambda n: isinstance(n, exp.Query)) if where else ()
    if any(reader.is_aggregate(n) for n in in_where):  # a public subquery may aggregate
        raise InputError(
            "DPX-V026 aggregate in WHERE. Rule: WHERE filters rows before aggregation. "
            "Fix: move the condition to HAVING."
        )

    # keys
    group = select.args.get("group")
    raw_keys = list(group.expressions) if group else []
    items = list(select.expressions)
    keys: list[exp.Expression] = []
    for k in raw_keys:
        if isinstance(k, exp.Literal) and not k.is_string:
            pos = int(k.this)
            if not 1 <= pos <= len(items):
                raise InputError(
                    f"DPX-V027 GROUP BY {pos} does not name a select item. "
                    "Fix: group by a column name or a position of the select list."
                )
            target = items[pos - 1]
            k = target.this if isinstance(target, exp.Alias) else target
        if any(reader.is_aggregate(n) for n in k.walk()):
            raise InputError("DPX-V026 aggregate in GROUP BY. Fix: group by columns only.")
        if any(isinstance(c, exp.Column) and c.name.lower() in uids for c in k.walk()):
            raise InputError(
                f"DPX-V028 GROUP BY on the privacy unit `{k.sql(dialect=DPSQL)}`{_where(k)}. Rule: it would "
                "publish one row per unit. Fix: group by other columns; count units with "
                "COUNT(DISTINCT uid)."
            )
        keys.append(k.copy())
    key_sql = [k.sql(dialect=DPSQL) for k in keys]

    aggregates: list[DPAggregate] = []
    signatures: dict[tuple, int] = {}

    def substitute(expr: exp.Expression, where_text: str) -> exp.Expression:
        """Replace keys by k<i> and DP aggregates by v<j>; reject anything else touching data."""

        def fn(node):
            if reader.is_aggregate(node):
                for inner in list(node.walk())[1:]:
                    if reader.is_aggregate(inner):
                        raise InputError(
                            f"DPX-V026 nested aggregate `{inner.sql(dialect=DPSQL)}` inside `{node.sql(dialect=DPSQL)}`. "
                            "Fix: aggregates take row expressions only."
                        )
                agg = reader.read(node, f"v{len(aggregates)}")
                j = signatures.get(agg.signature)
                if j is None:
                    j = signatures[agg.signature] = len(aggregates)
                    aggregates.append(agg)
                return exp.column(f"v{j}")
            sql = node.sql(dialect=DPSQL) if isinstance(node, exp.Expression) else None
            if sql in key_sql:
                return exp.column(f"k{key_sql.index(sql)}")
            return node

        out = expr.copy().transform(fn)
        for col in out.find_all(exp.Column):
            if col.table or not (col.name.startswith(("k", "v")) and col.name[1:].isdigit()):
                if col.name.lower() in uids:
                    raise InputError(
                        f"DPX-V028 the privacy unit `{col.sql(dialect=DPSQL)}` cannot be output{where_text}. "
                        "Rule: the privacy unit itself is never released. Fix: remove it; "
                        "use COUNT(DISTINCT uid) to count units."
                    )
                raise InputError(
                    f"DPX-V027 `{col.sql(dialect=DPSQL)}`{where_text} is neither a GROUP BY key nor inside a DP "
                    f"aggregate. Fix: add it to GROUP BY or wrap it in a DP aggregate."
                )
        return out

    outputs: list[OutputItem] = []
    for i, item in enumerate(items):
        if isinstance(item, exp.Star):
            raise InputError(
                "DPX-V027 SELECT * in a DP query. Fix: list the GROUP BY keys and DP aggregates."
            )
        inner = item.this if isinstance(item, exp.Alias) else item
        name = item.alias if isinstance(item, exp.Alias) else None
        expr = substitute(inner, _where(inner))
        key_index = agg_index = None
        if isinstance(expr, exp.Column) and expr.name[0] == "k":
            key_index = int(expr.name[1:])
        elif isinstance(expr, exp.Column) and expr.name[0] == "v":
            agg_index = int(expr.name[1:])
        if name is None:
            name = inner.name if isinstance(inner, exp.Column) else f"col{i + 1}"
        outputs.append(OutputItem(name, expr, key_index, agg_index))
    names = [o.name.lower() for o in outputs]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise InputError(
            f"DPX-V027 two output columns are named `{dup}`. Fix: add distinct aliases."
        )

    having = select.args.get("having")
    if having is not None:  # HAVING may name output aliases
        by_alias = {o.name.lower(): o.expression for o in outputs}
        having = having.copy()
        for c in list(having.find_all(exp.Column)):
            if not c.table and c.name.lower() in by_alias and c.name.lower() not in uids:
                c.replace(by_alias[c.name.lower()].copy())
    order = select.args.get("order")
    post = PostProcessing(
        having=substitute(having.this, " in HAVING") if having is not None else None,
        order=_order_substitute(order, substitute, set(names)) if order is not None else None,
        limit=select.args.get("limit"),
    )
    if select.args.get("offset") is not None:
        raise InputError("DPX-V027 OFFSET is not supported in a DP query. Fix: use LIMIT only.")

    relation = exp.Select()
    for arg in ("from_", "joins", "with_"):
        if select.args.get(arg) is not None:
            relation.set(
                arg,
                select.args[arg].copy() if arg != "joins" else [j.copy() for j in select.args[arg]],
            )
    if not keys and not aggregates:
        raise InputError(
            "DPX-V020 the DP SELECT has no DP aggregate. Fix: add e.g. ANON_COUNT(*, 1)."
        )
    if select.args.get("distinct"):
        raise InputError("DPX-V027 SELECT DISTINCT in a DP query. Fix: use GROUP BY.")
    key_names = [
        next((o.name for o in outputs if o.key_index == i), k.sql(dialect=DPSQL))
        for i, k in enumerate(keys)
    ]
    return DPQuery(
        form,
        options,
        keys,
        key_names,
        aggregates,
        outputs,
        relation,
        where.this.copy() if where is not None else None,
        post,
        text,
    )


# Clauses of the top-level DP SELECT that the rewriter understands; any other is refused
# rather than silently dropped (e.g. QUALIFY, WINDOW, USING SAMPLE, GROUP BY ROLLUP/ALL).
HANDLED_CLAUSES = {
    "with_", "kind", "hint", "expressions", "from_", "joins", "where", "group", "having",
    "order", "limit", "offset", "distinct",
}  # fmt: skip


def _reject_unsupported_clauses(select: exp.Select) -> None:
    extra = sorted(
        k.rstrip("_").upper() for k, v in select.args.items() if v and k not in HANDLED_CLAUSES
    )
    group = select.args.get("group")
    if group is not None:
        extra += [
            f"GROUP BY {k.upper()}" for k, v in group.args.items() if v and k != "expressions"
        ]
    if extra:
        raise InputError(
            f"DPX-V027 {', '.join(extra)} is not supported in a DP SELECT. Rule: only FROM, "
            "WHERE, GROUP BY keys, HAVING, ORDER BY and LIMIT are understood (v1). Fix: remove it."
        )


def _order_substitute(order: exp.Order, substitute, output_names: set[str]) -> exp.Order:
    """ORDER BY may name output aliases (kept) or key/aggregate expressions (substituted)."""
    new = order.copy()
    for ordered in new.expressions:
        target = ordered.this
        if (
            isinstance(target, exp.Column)
            and not target.table
            and target.name.lower() in output_names
        ):
            continue
        ordered.set("this", substitute(target, " in ORDER BY"))
    return new
