"""The privacy unit followed by column identity (lineage), never by name.

After sqlglot's qualification (every column bound to the relation it comes from, every `*`
expanded against the catalogue schema), each output column of each scope — tables, derived
tables, CTEs, joins — is traced back to a base-table column. The privacy unit is the catalogue's
unit column *itself*, the pair (table, column); a column "is the unit" only if it is a chain of
plain column references ending at that pair. Renaming (`uid AS person`) keeps the identity;
computing (`uid + 0`, `CASE ... uid ...`) loses it, so such a column is never accepted as the
unit.

Everything the resolver cannot follow over private data is refused before any data is read
(fail closed): relabelling syntax (alias column lists, CTE column lists, `* REPLACE`,
`* RENAME`, `COLUMNS(...)`), lambdas, row-order pseudo-columns, positional/as-of joins, window
functions, QUALIFY and sampling. Rule codes are DPX-L0xx (see RULES at the end).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope

from core.dpsql.catalog import Catalog
from core.dpsql.parse.dialect import DPSQL, Clamped
from core.errors import InputError

# DuckDB virtual columns: they number or locate rows, so they shift when one unit is removed.
PSEUDO_COLUMNS = {"rowid", "filename", "file_row_number", "file_index"}


@dataclass(frozen=True)
class BaseColumn:
    """A column of a registered table: the identity lineage resolves to."""

    table: str
    column: str


def _refuse(code: str, what: str, rule: str, fix: str) -> InputError:
    return InputError(f"DPX-{code} {what}. Rule: {rule}. Fix: {fix}.")


# -- syntax the resolver cannot follow --------------------------------------------------------
def refuse_untraceable(tree: exp.Expression) -> None:
    """L001-L008: constructs that relabel columns or depend on row order are refused anywhere in
    the query (a public part today can be joined to private rows tomorrow: fail closed)."""
    for node in tree.walk():
        if isinstance(node, exp.TableAlias) and node.args.get("columns"):
            raise _refuse(
                "L001",
                f"column-alias list `{node.sql(dialect=DPSQL)}`",
                "a column list renames columns by position, so the privacy unit could be "
                "relabelled; the unit is followed by identity and names must be traceable",
                "drop the column list and rename in the SELECT list, e.g. "
                "(SELECT uid, dept AS d FROM orders) AS o",
            )
        if isinstance(node, exp.Star) and any(
            node.args.get(k) for k in ("except_", "except", "replace", "rename")
        ):
            raise _refuse(
                "L002",
                f"`{node.sql(dialect=DPSQL)}` modifies `*`",
                "* REPLACE / RENAME / EXCLUDE relabel or drop columns implicitly",
                "list the columns you need explicitly",
            )
        if isinstance(node, exp.Columns):
            raise _refuse(
                "L003",
                "COLUMNS(...) selects columns by pattern",
                "every column must be named so its lineage can be followed",
                "list the columns explicitly",
            )
        if isinstance(node, exp.Lambda):
            raise _refuse(
                "L004",
                "lambda expression",
                "lambdas and list/struct functions are outside the expression language",
                "compute the value with plain SQL expressions",
            )
        if isinstance(node, exp.Column) and node.name.lower() in PSEUDO_COLUMNS:
            raise _refuse(
                "L005",
                f"pseudo-column `{node.name}`",
                "row numbers and file positions shift when one unit's rows are removed, so they "
                "would be released attributes of other units",
                "remove it (rename a real data column of that name before registering the file)",
            )
        if isinstance(node, exp.Join) and (node.args.get("method") or "").upper() in (
            "POSITIONAL",
            "ASOF",
        ):
            raise _refuse(
                "L006",
                f"{node.args['method'].upper()} JOIN",
                "it pairs rows by position or nearest value, so one unit decides which rows "
                "of other units match",
                "join on columns with an equality condition",
            )
        if isinstance(node, (exp.Window, exp.Qualify, exp.WindowSpec)):
            raise _refuse(
                "L007",
                "window function or QUALIFY",
                "a window mixes rows of several units",
                "remove it; aggregate per unit in a subquery grouped by the unit instead",
            )
        if isinstance(node, exp.TableSample):
            raise _refuse(
                "L008",
                "SAMPLE / TABLESAMPLE / USING SAMPLE",
                "sampling selects rows across units",
                "remove it (DP aggregates already bound each unit's contribution)",
            )


# -- schema and qualification -----------------------------------------------------------------
def catalog_schema(catalog: Catalog) -> dict[str, dict[str, str]]:
    """{table: {column: SQL type}} of every registered table: its declared schema (public
    facts; `TableSpec.schema`), never the types of the values it happens to hold."""
    return {
        t.name.lower(): {c.name.lower(): c.type.value for c in t.schema.columns}
        for t in catalog.tables()
    }


def qualified_copy(select: exp.Select, catalog: Catalog) -> exp.Select:
    """A copy of `select` with every column bound to its relation and `*` expanded.
    L010: a column the resolver cannot bind (unknown, ambiguous) is refused."""
    copy = select.copy()
    copy.set("hint", None)  # the DP options are not columns
    copy = copy.transform(  # sqlglot's generator does not know the DP node; keep its columns
        lambda n: (
            exp.Anonymous(this="CLAMPED", expressions=[n.this, n.args["low"], n.args["high"]])
            if isinstance(n, Clamped)
            else n
        )
    )
    try:
        return qualify(
            copy,
            schema=catalog_schema(catalog),
            dialect="duckdb",
            expand_stars=True,
            validate_qualify_columns=True,
            quote_identifiers=False,
            identify=False,
        )
    except (OptimizeError, SqlglotError, KeyError, ValueError) as err:
        raise _refuse(
            "L010",
            f"the column lineage cannot be resolved ({str(err).splitlines()[0][:160]})",
            "every column must be bound to one registered table or subquery before any data "
            "is read",
            "qualify ambiguous columns with their table alias and name only existing columns",
        ) from None


# -- lineage ----------------------------------------------------------------------------------
class Lineage:
    """Resolves columns of a qualified query to base-table columns, scope by scope."""

    def __init__(self, qualified: exp.Select, catalog: Catalog):
        self.catalog = catalog
        self.root = build_scope(qualified)
        self._private: dict[int, bool] = {}  # id(scope) -> reads a private table
        if self.root is None:
            raise _refuse("L010", "the query has no analysable scope", "-", "write a DP SELECT")

    def units(self) -> set[BaseColumn]:
        return {
            BaseColumn(t.name.lower(), t.uid.lower())
            for t in self.catalog.tables()
            if t.private and t.uid
        }

    def resolve(self, scope: Scope, column: exp.Column, depth: int = 0) -> BaseColumn | None:
        """The base column `column` is a plain copy of, or None when it is computed."""
        if depth > 64 or not column.table:
            return None
        source = scope.sources.get(column.table)
        if isinstance(source, exp.Table):
            spec = self.catalog.get(source.name)
            return None if spec is None else BaseColumn(spec.name.lower(), column.name.lower())
        if isinstance(source, Scope) and isinstance(source.expression, exp.Select):
            item = next(
                (
                    e
                    for e in source.expression.expressions
                    if e.alias_or_name.lower() == column.name.lower()
                ),
                None,
            )
            inner = item.this if isinstance(item, exp.Alias) else item
            if isinstance(inner, exp.Column):
                return self.resolve(source, inner, depth + 1)
        return None

    def is_unit(self, scope: Scope, column: exp.Expression) -> bool:
        return isinstance(column, exp.Column) and self.resolve(scope, column) in self.units()

    def reads_private(self, scope_or_table) -> bool:
        """Whether a scope reads a private table through any of its sources. Memoised per
        scope: a chain of CTEs that each read the previous one twice is linear, not 2^n."""
        if isinstance(scope_or_table, exp.Table):
            spec = self.catalog.get(scope_or_table.name)
            return bool(spec and spec.private)
        key = id(scope_or_table)
        if key not in self._private:
            self._private[key] = False  # a cycle (never valid SQL) reads nothing new
            self._private[key] = any(self.reads_private(s) for s in scope_or_table.sources.values())
        return self._private[key]


def check_lineage(select: exp.Select, catalog: Catalog, top_uids: dict[str, str]) -> Lineage:
    """Identity checks on the whole query (after `refuse_untraceable`):

    V010 every join of two private relations, in any scope, has an equality of two columns that
    both resolve to a unit column; L021 the column the rewriter uses as `_uid` for each private
    top-level source (`top_uids`: alias -> column name) resolves to a unit column; V012 a private
    subquery that aggregates groups by a column resolving to the unit; V028 no GROUP BY key of
    the DP SELECT is, or is computed from, the unit."""
    lineage = Lineage(qualified_copy(select, catalog), catalog)
    for scope in lineage.root.traverse():
        if isinstance(scope.expression, exp.Select):
            _check_joins(lineage, scope)
            if scope is not lineage.root and lineage.reads_private(scope):
                _check_private_grouping(lineage, scope)
    root = lineage.root
    for alias, uid in top_uids.items():
        column = exp.column(uid.lower(), table=alias.lower())
        if not lineage.is_unit(root, column):
            raise _refuse(
                "L021",
                f"`{alias}.{uid}` is used as the privacy unit but is not the registered unit "
                "column",
                "the unit is the catalogue's unit column itself, followed through renames",
                "select the registered unit column in the subquery without computing on it",
            )
    group = root.expression.args.get("group")
    for key in group.expressions if group else []:
        if any(lineage.is_unit(root, c) for c in key.find_all(exp.Column)):
            raise _refuse(
                "V028",
                f"GROUP BY on the privacy unit `{key.sql(dialect=DPSQL)}` (the key is, or is "
                "computed from, the unit column, followed through renames)",
                "it would publish one partition per unit",
                "group by other columns; count units with COUNT(DISTINCT uid)",
            )
    return lineage


def _check_joins(lineage: Lineage, scope: Scope) -> None:
    select = scope.expression
    from_ = select.args.get("from_")
    if from_ is None:
        return
    left_private = _private_alias(lineage, scope, from_.this)
    seen = {from_.this.alias_or_name.lower()} if left_private else set()
    for join in select.args.get("joins") or []:
        right = join.this.alias_or_name.lower()
        right_private = _private_alias(lineage, scope, join.this)
        if right_private and seen and not _joined_on_unit(lineage, scope, join, seen, right):
            raise _refuse(
                "V010",
                "JOIN of private relations is not on the privacy unit (the condition is "
                "checked by column identity, not by name)",
                "a join row must come from one unit: both sides' unit columns (by identity, not "
                "by name) must be equal",
                f"JOIN ... USING (uid) or add `AND <left>.uid = {right}.uid` with the registered "
                "unit columns (not relabelled ones)",
            )
        if right_private:
            seen.add(right)


def _private_alias(lineage: Lineage, scope: Scope, node: exp.Expression) -> bool:
    source = scope.sources.get(node.alias_or_name)
    return source is not None and lineage.reads_private(source)


def _joined_on_unit(lineage, scope, join: exp.Join, left: set[str], right: str) -> bool:
    on = join.args.get("on")
    if on is None:
        return False
    conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
    for c in conjuncts:
        if isinstance(c, exp.EQ) and all(
            lineage.is_unit(scope, side) for side in (c.this, c.expression)
        ):
            tables = {c.this.table.lower(), c.expression.table.lower()}
            if right in tables and tables & left:
                return True
    return False


def _check_private_grouping(lineage: Lineage, scope: Scope) -> None:
    select = scope.expression
    group = select.args.get("group")
    aggregates = any(isinstance(n, exp.AggFunc) for e in select.expressions for n in e.walk())
    if group is None and not aggregates:
        return
    keys = group.expressions if group is not None else []
    if not any(lineage.is_unit(scope, k) for k in keys):
        raise _refuse(
            "V012",
            "a private subquery aggregates without GROUP BY on the privacy unit column (by "
            "identity: a renamed or computed column is not the unit)",
            "GROUP BY in a private subquery must include the unit itself (Wilson Table 4.3)",
            "add the registered unit column to its GROUP BY and SELECT",
        )


RULES = {
    "DPX-L001": "column-alias lists on tables, subqueries or CTEs",
    "DPX-L002": "* REPLACE / RENAME / EXCLUDE",
    "DPX-L003": "COLUMNS(...)",
    "DPX-L004": "lambdas",
    "DPX-L005": "pseudo-columns (rowid, filename, file_row_number, file_index)",
    "DPX-L006": "POSITIONAL and ASOF joins",
    "DPX-L007": "window functions and QUALIFY",
    "DPX-L008": "SAMPLE / TABLESAMPLE / USING SAMPLE",
    "DPX-L010": "a column the resolver cannot bind",
    "DPX-V010": "a private-private join not on unit columns (by identity)",
    "DPX-L021": "the rewriter's _uid is not the unit column (by identity)",
    "DPX-V012": "a private subquery aggregating without grouping by the unit (by identity)",
    "DPX-V028": "a DP GROUP BY key that is, or is computed from, the unit (by identity)",
}
