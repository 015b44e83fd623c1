"""The ownership rules of Wilson's Table 4.3 on the FROM relation, by name (spec §2.2).

The FROM relation is checked recursively: no row of any operator may mix privacy units (joins
of private relations on the unit, GROUP BY uid in private subqueries, subqueries project uid),
and the unit columns are returned so the rewriter can propagate them. The same rules by column
identity are in `core.dpsql.check.lineage`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from core.dpsql.catalog import Catalog
from core.dpsql.parse.dialect import DPSQL, DPClause
from core.errors import InputError


# -- FROM relation ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    """One relation in a FROM clause: its alias, whether it holds private rows, its uid column."""

    alias: str
    private: bool
    uid: str | None
    table: str | None = None  # the catalogue table, when the source is one


class RelationChecker:
    """Checks Table 4.3 recursively and finds the uid columns to propagate."""

    def __init__(self, catalog: Catalog, ctes: dict[str, exp.Select]):
        self.catalog = catalog
        self.ctes = ctes
        self._visiting: set[str] = set()  # CTEs being checked: a cycle would never end
        self._cte_private: dict[str, bool] = {}  # CTE name -> reads a private table

    def sources(self, select: exp.Select) -> list[Source]:
        """Sources of `select`'s FROM/JOINs after checking every join rule."""
        from_ = select.args.get("from_")
        if from_ is None:
            raise InputError("DPX-S003 the query has no FROM clause. Fix: name a registered table.")
        left = [self.source(from_.this)]
        for join in select.args.get("joins") or []:
            right = self.source(join.this)
            self._check_join(join, left, right)
            left.append(right)
        return left

    def source(self, node: exp.Expression) -> Source:
        if isinstance(node, exp.Table):
            if (
                not isinstance(node.this, exp.Identifier)
                or node.args.get("db")
                or node.args.get("catalog")
            ):
                raise InputError(
                    f"DPX-S003 `{node.sql(dialect=DPSQL)}` is not a registered table. Rule: no table "
                    "functions, file paths or system catalogues. Fix: register the file as a "
                    "table and query it by name."
                )
            name = node.name
            alias = node.alias or name
            if name.lower() in self.ctes:
                if name.lower() in self._visiting:
                    raise InputError(
                        f"DPX-V016 CTE `{name}` refers to itself. Rule: WITH RECURSIVE and "
                        "cyclic CTEs are not allowed. Fix: read a registered table instead."
                    )
                self._visiting.add(name.lower())
                try:
                    return self._subquery(self.ctes[name.lower()], alias)
                finally:
                    self._visiting.discard(name.lower())
            spec = self.catalog.get(name)
            if spec is None:
                known = ", ".join(self.catalog.names()) or "none"
                raise InputError(
                    f"DPX-S003 unknown table `{name}`. Rule: only registered tables can be read "
                    f"(no file paths). Registered: {known}. Fix: use one of them."
                )
            return _no_private_pivot(node, Source(alias, spec.private, spec.uid, spec.name))
        if isinstance(node, exp.Subquery):
            if not node.alias:
                raise InputError("DPX-V016 a subquery in FROM needs an alias. Fix: add AS name.")
            return _no_private_pivot(node, self._subquery(node.this, node.alias))
        raise InputError(
            f"DPX-S003 `{node.sql(dialect=DPSQL)}` is not allowed in FROM. Rule: only registered tables and "
            "SELECT subqueries (no UNNEST, VALUES, LATERAL or table functions). Fix: remove it."
        )

    def _check_join(self, join: exp.Join, left: list[Source], right: Source) -> None:
        private_left = [s for s in left if s.private]
        if not (private_left and right.private):
            return  # joins with public relations are free
        using = join.args.get("using")
        on = join.args.get("on")
        kind = (join.args.get("kind") or "").upper()
        if kind == "CROSS" or (using is None and on is None):
            raise InputError(
                f"DPX-V011 CROSS or comma join of private relations `{private_left[-1].alias}` "
                f"and `{right.alias}`. Rule: a join row must come from one privacy unit "
                f"(Wilson Table 4.3). Fix: JOIN {right.alias} USING ({right.uid})."
            )
        if using is not None:
            names = {i.name.lower() for i in using}
            if (
                right.uid
                and right.uid.lower() in names
                and any(s.uid and s.uid.lower() in names for s in private_left)
            ):
                return
        elif on is not None and self._on_matches_uid(on, private_left, right):
            return
        other = private_left[-1]
        raise InputError(
            f"DPX-V010 JOIN between private tables `{other.alias}` and `{right.alias}` is not on "
            "the privacy unit. Rule: joins of private relations must match the uid (Wilson Table "
            f"4.3). Fix: `JOIN {right.alias} USING ({right.uid})` or add "
            f"`AND {other.alias}.{other.uid} = {right.alias}.{right.uid}`."
        )

    def _on_matches_uid(
        self, on: exp.Expression, private_left: list[Source], right: Source
    ) -> bool:
        conjuncts = list(on.flatten()) if isinstance(on, exp.And) else [on]
        left_cols = {(s.alias.lower(), s.uid.lower()) for s in private_left if s.uid}
        right_col = (right.alias.lower(), (right.uid or "").lower())
        for c in conjuncts:
            if not isinstance(c, exp.EQ):
                continue
            a, b = c.this, c.expression
            if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
                continue
            pa, pb = (a.table.lower(), a.name.lower()), (b.table.lower(), b.name.lower())
            if (pa in left_cols and pb == right_col) or (pb in left_cols and pa == right_col):
                return True
        return False

    def _subquery(self, select: exp.Expression, alias: str) -> Source:
        if not isinstance(select, exp.Select):
            if self._reads_private(select):
                raise InputError(
                    f"DPX-V016 set operation or PIVOT in subquery `{alias}` over private "
                    "tables. Rule: UNION/INTERSECT/EXCEPT/PIVOT may mix units (v1). Fix: query the "
                    "tables separately."
                )
            return Source(alias, False, None)
        if isinstance(select.args.get("hint"), DPClause):
            raise InputError(
                "DPX-V016 a DP SELECT must be the top-level statement. Fix: move it out."
            )
        inner = self.sources(select)
        private = [s for s in inner if s.private]
        if not private:
            return Source(alias, False, None)  # public subqueries are unrestricted
        self._check_private_subquery(select, alias, inner)
        group = select.args.get("group")
        has_agg = any(isinstance(n, exp.AggFunc) for e in select.expressions for n in e.walk())
        if group is not None or has_agg:
            keys = group.expressions if group is not None else []
            if not any(_is_uid(k, inner) for k in keys):
                raise InputError(
                    f"DPX-V012 subquery `{alias}` aggregates private rows without grouping by the "
                    "privacy unit. Rule: GROUP BY in a private subquery must include uid (Wilson "
                    f"Table 4.3). Fix: add {private[0].uid} to its GROUP BY and SELECT."
                )
        uid = self._projected_uid(select, inner, alias)
        return Source(alias, True, uid)

    def _check_private_subquery(self, select: exp.Select, alias: str, inner: list[Source]) -> None:
        for arg, what in (("limit", "LIMIT"), ("offset", "OFFSET")):
            if select.args.get(arg) is not None:
                raise InputError(
                    f"DPX-V016 {what} in private subquery `{alias}`. Rule: it selects rows "
                    "depending on other units (v1). Fix: remove it."
                )
        distinct = select.args.get("distinct")
        on = distinct.args.get("on") if distinct is not None else None
        on_keys = on.expressions if isinstance(on, exp.Tuple) else [on]
        if on is not None and not any(_is_uid(e, inner) for e in on_keys):
            raise InputError(
                f"DPX-V016 DISTINCT ON without the privacy unit in private subquery `{alias}`. "
                "Rule: it keeps one row per key across units, so one unit can change which rows "
                f"of other units survive (Wilson Table 4.3). Fix: add the unit column to DISTINCT "
                "ON, or use GROUP BY with the unit."
            )
        for node in select.walk():
            if isinstance(node, (exp.TableSample, exp.Pivot)):
                raise InputError(
                    f"DPX-V016 sampling or PIVOT in private subquery `{alias}`. Rule: they "
                    "select or combine rows across units (v1). Fix: remove it."
                )
            if isinstance(node, exp.Window):
                raise InputError(
                    f"DPX-V016 window function in private subquery `{alias}`. Rule: windows mix "
                    "rows of several units. Fix: remove it."
                )
            if isinstance(node, (exp.Unnest, exp.Lateral)):
                raise InputError(
                    f"DPX-V016 UNNEST/LATERAL in private subquery `{alias}`. Rule: they turn one "
                    "row into several across the query. Fix: remove it."
                )
            if (
                node is not select
                and isinstance(node, (exp.Exists, exp.In))
                and (node.args.get("query") is not None or isinstance(node, exp.Exists))
            ):
                raise InputError(
                    f"DPX-V016 expression subquery (IN/EXISTS) in private subquery `{alias}`. "
                    "Fix: use a JOIN with a public table instead."
                )

    def _projected_uid(self, select: exp.Select, inner: list[Source], alias: str) -> str:
        """The output name of the privacy unit. The column must come from a private source
        (a same-named public column is not the unit) and its output name must be unique."""
        items = list(select.expressions)
        stars = [i for i in items if _is_star(i)]
        private = [s for s in inner if s.private]
        if stars and (len(inner) != 1 or len(stars) != 1):
            raise InputError(
                f"DPX-V013 `*` in private subquery `{alias}` over a join. Rule: the privacy unit "
                "must be identifiable in its output (a joined table may carry a column of the "
                f"same name). Fix: list the columns, including {private[0].uid}."
            )
        if stars:
            uid = private[0].uid
        else:
            found = next((i for i in items if _is_uid(_unalias(i), inner)), None)
            if found is None:
                raise InputError(
                    f"DPX-V013 subquery `{alias}` does not output the privacy unit. Rule: every "
                    "operator must carry uid to its output (Wilson Table 4.3). Fix: add "
                    f"{private[0].uid} to its SELECT list."
                )
            uid = found.alias_or_name
        others = [i for i in items if not _is_star(i) and i.alias_or_name.lower() == uid.lower()]
        if len(others) > (0 if stars else 1):
            raise InputError(
                f"DPX-V014 subquery `{alias}` outputs two columns named `{uid}`. Rule: the "
                "privacy unit must be unambiguous. Fix: rename the other column."
            )
        return uid

    def _reads_private(self, node: exp.Expression) -> bool:
        """`node` reads a private table, directly or through a CTE (a CTE counts as private
        while it is being decided, so a cycle fails closed; each CTE is decided once)."""
        for table in node.find_all(exp.Table):
            spec = self.catalog.get(table.name)
            if spec is not None and spec.private:
                return True
            name = table.name.lower()
            if spec is None and name in self.ctes:
                if name not in self._cte_private:
                    self._cte_private[name] = True
                    self._cte_private[name] = self._reads_private(self.ctes[name])
                if self._cte_private[name]:
                    return True
        return False


def _unalias(node: exp.Expression) -> exp.Expression:
    return node.this if isinstance(node, exp.Alias) else node


def _is_star(node: exp.Expression) -> bool:
    return isinstance(node, exp.Star) or (
        isinstance(node, exp.Column) and isinstance(node.this, exp.Star)
    )


def _is_uid(node: exp.Expression, sources: list[Source]) -> bool:
    """A column that is the privacy unit of a private source of this scope. Qualified columns
    must name that source; unqualified ones match by name (DuckDB rejects an ambiguous name)."""
    if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
        return False
    name = node.name.lower()
    if node.table:
        return any(
            s.private and s.uid and s.alias.lower() == node.table.lower() and s.uid.lower() == name
            for s in sources
        )
    return any(s.private and s.uid and s.uid.lower() == name for s in sources)


def _no_private_pivot(node: exp.Expression, source: Source) -> Source:
    if source.private and (node.args.get("pivots") or node.args.get("sample")):
        raise InputError(
            f"DPX-V016 PIVOT/UNPIVOT or sampling on private relation `{source.alias}`. Rule: "
            "they combine or select rows across units (v1). Fix: remove it."
        )
    return source


def check_expression_subqueries(select: exp.Select, checker: RelationChecker) -> None:
    """V016: subqueries inside expressions (WHERE, ON, select list, GROUP BY, HAVING) may only
    read public tables — over private rows they would mix units (e.g. a global MAX)."""
    for node in select.find_all(exp.Select):
        if node is select:
            continue
        parent = node.parent
        if isinstance(parent, exp.CTE):
            continue
        if isinstance(parent, exp.Subquery) and isinstance(parent.parent, (exp.From, exp.Join)):
            continue
        if checker._reads_private(node):
            raise InputError(
                "DPX-V016 expression subquery (scalar, IN or EXISTS) over a private table. Rule: "
                "it would mix rows of several units. Fix: join a public table, or move the "
                "subquery into FROM with the privacy unit (Wilson Table 4.3)."
            )
        checker.sources(node)  # public subqueries must still name registered tables


def ctes_of(select: exp.Select, catalog: Catalog) -> dict[str, exp.Select]:
    with_ = select.args.get("with_")
    for node in select.find_all(exp.With):
        if node is not with_:
            raise InputError(
                "DPX-V016 WITH inside a subquery. Rule: CTEs are allowed only at the start of "
                "the query, where they are checked against the catalogue (a nested CTE could "
                "shadow a table name). Fix: move the CTE to the leading WITH."
            )
    ctes: dict[str, exp.Select] = {}
    if with_ is None:
        return ctes
    if with_.args.get("recursive"):
        raise InputError("DPX-V016 WITH RECURSIVE is not allowed. Fix: remove RECURSIVE.")
    for cte in with_.expressions:
        name = cte.alias.lower()
        if catalog.get(name) is not None:
            raise InputError(
                f"DPX-V016 CTE `{cte.alias}` shadows a registered table. Fix: rename the CTE."
            )
        ctes[name] = cte.this
    return ctes


def public_key_source(keys: list[exp.Expression], sources: list[Source]) -> Source:
    """PUBLIC_GROUPS: every GROUP BY key is a column of one public catalogue table (qualified)."""
    by_alias = {s.alias.lower(): s for s in sources}
    found: set[str] = set()
    for k in keys:
        src = by_alias.get(k.table.lower()) if isinstance(k, exp.Column) and k.table else None
        if src is None or src.private or src.table is None:
            raise InputError(
                f"DPX-V034 with PUBLIC_GROUPS every GROUP BY key must be a column of a public "
                f"table, written with its alias; `{k.sql(dialect=DPSQL)}` is not. Fix: join a "
                "public table listing the groups and group by e.g. D.dept."
            )
        found.add(src.alias.lower())
    if len(found) != 1:
        raise InputError(
            "DPX-V034 PUBLIC_GROUPS needs GROUP BY keys from exactly one public table. Fix: "
            "group by columns of one public table."
        )
    return by_alias[found.pop()]
