"""DPX-A006: a scalar subquery must provably return at most one row.

A subquery used as a value (`uid = (SELECT g FROM Pub)`, `LIMIT (SELECT ...)`, a scalar in the
select list) raises in DuckDB (and Spark) when it returns two or more rows. Such a subquery can
only read public tables (V016), so *what* it returns is public, but *whether* the engine
evaluates it is not promised: behind a private filter that removes every row, behind a CASE
branch taken for one unit only, or on the probe side of a join with an empty build side, it may
never run. A failure would then depend on private data — a released bit that no noise covers.

The class is closed by a syntactic rule decided before any data is read: a scalar subquery is
accepted only when its shape guarantees at most one row, whatever the tables hold:

* a SELECT with `LIMIT 0` or `LIMIT 1` (or `FETCH FIRST 1 ROW ONLY`) — an integer literal, not
  a percentage, no WITH TIES;
* a SELECT whose select list holds an aggregate (MAX, COUNT, ...) and that has no GROUP BY:
  exactly one row before HAVING, at most one after;

Everything else is refused (not guessed from the data). `x IN (SELECT ...)` and `EXISTS (...)`
never raise on the number of rows and are not scalar subqueries. Every other way a public
subquery could raise is covered by the expression allowlist, which applies inside subqueries
too (`core.dpsql.check.allowlist`).
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.check.allowlist import refuse
from core.dpsql.parse.dialect import DPSQL

# subqueries in these positions are relations or row tests, never a value
RELATION_PARENTS = (exp.From, exp.Join, exp.CTE, exp.Exists, exp.Lateral)
ROW_MULTIPLIERS = (exp.Unnest, exp.Explode, exp.Window)


def check_scalar_subqueries(tree: exp.Expression) -> None:
    """A006: every subquery used as a value (anywhere in `tree`, public subqueries included)
    provably returns at most one row."""
    for node in tree.walk():
        if not isinstance(node, (exp.Subquery, exp.Query)) or not _is_scalar(node):
            continue
        if not at_most_one_row(node):
            raise refuse(
                "A006",
                f"the scalar subquery `{_short(node)}` may return more than one row",
                "a scalar subquery with two or more rows makes the query fail, and whether the "
                "engine evaluates it can depend on private rows, so the failure would release "
                "a bit; only a subquery that returns at most one row by its shape is accepted",
                "add LIMIT 1, or aggregate without GROUP BY (e.g. (SELECT MAX(g) FROM Pub)), or "
                "use x IN (SELECT ...) or a JOIN with the public table",
            )


def _is_scalar(node: exp.Expression) -> bool:
    """`node` is the outermost wrapper of a subquery that is evaluated as a value."""
    parent = node.parent
    if parent is None or isinstance(parent, (exp.Subquery, *RELATION_PARENTS)):
        return False  # the root, a relation, or an inner layer of parentheses
    # x IN (SELECT ...) tests membership: any number of rows
    return not (isinstance(parent, exp.In) and node.arg_key == "query")


def at_most_one_row(query: exp.Expression) -> bool:
    """True when the shape of `query` alone guarantees at most one row (see the module doc)."""
    if _limit_at_most_one(query):
        return True
    if isinstance(query, exp.Subquery):
        return at_most_one_row(query.this)
    if not isinstance(query, exp.Select):
        return False
    if query.args.get("group") is not None:
        return False
    items = query.expressions
    if any(item.find(*ROW_MULTIPLIERS) is not None for item in items):
        return False
    return any(_has_own_aggregate(item) for item in items)


def _limit(node: exp.Expression) -> exp.Expression | None:
    return node.args.get("limit")


def _limit_at_most_one(query: exp.Expression) -> bool:
    limit = _limit(query)
    if isinstance(limit, exp.Limit):
        count = limit.expression
    elif isinstance(limit, exp.Fetch):
        count = limit.args.get("count")
    else:
        return False
    options = limit.args.get("limit_options")
    if options is not None and (options.args.get("percent") or options.args.get("with_ties")):
        return False
    if not (isinstance(count, exp.Literal) and count.is_int):
        return False
    return int(count.this) <= 1


def _has_own_aggregate(item: exp.Expression) -> bool:
    """An aggregate of this SELECT (not of a nested subquery, not inside a window)."""
    select = item.parent
    return any(
        agg.find_ancestor(exp.Window, exp.Query) is select for agg in item.find_all(exp.AggFunc)
    )


def _short(node: exp.Expression) -> str:
    text = node.sql(dialect=DPSQL)
    return text if len(text) <= 80 else text[:77] + "..."
