"""The work a query does is bounded by public facts before any private row is read (issue 19).

Whether a query finishes within its time limit is a released bit, and its running time is
observable. If one private row could fan out to a number of rows that the query's author
chooses (`JOIN Seq A ON U.uid = 7 JOIN Seq B ON TRUE JOIN Seq C ON TRUE ...`), the presence of
one unit could decide a timeout: an unbounded privacy loss. So before anything is read, this
check computes from public facts alone an upper bound A on how many rows any one private row
can produce through the query's joins, CTEs and subqueries, and refuses (DPX-V040) a query
whose bound exceeds `MAX_AMPLIFICATION`.

The public facts: the row count of each public table and, per column, its largest number of
rows sharing one value (its key multiplicity; public tables are public, so their statistics may
be read); the query text and its join shapes; and `JOIN_ROWS_PER_UNIT`, the documented number
of rows per unit that each private table keeps when it enters a join with another private
relation (the rewriter enforces it: `core.dpsql.sql.row_caps`). No predicate over private data
decides an amplification: the only join condition that bounds a fan-out is an equality
conjunct `X.col = <anything not reading X>`, and the bound it gives is the public multiplicity
of X.col, whatever the other side's value. Everything else — ON TRUE, CROSS and comma joins,
non-equi and OR conditions, a key computed from columns — fans out to all of X's rows.

Per relation (each FROM source and every join step of every scope, recursively):
- a public relation has `rows` (an upper bound) and a multiplicity per column it can name;
- a private relation has `amp` (rows one private base row can appear in) and `per_unit` (rows
  one unit can have; a base table's is `JOIN_ROWS_PER_UNIT`, a subquery grouped by the unit
  alone has 1);
- joining a public X to L multiplies L's amp and per_unit by X's fan-out (the multiplicity of
  X's equated key, or X's rows); joining a private X to a private L (on the unit, rule V010)
  gives amp = max(amp(L)·per_unit(X), amp(X)·per_unit(L)) and per_unit(L)·per_unit(X);
- a correlated expression subquery (public only, V016) may run once per row: its size
  multiplies the scope's amp.
The bound is checked at every join step, so an intermediate blow-up that a later GROUP BY or
filter would shrink is refused too.

What remains is work roughly linear in the private rows the query reads (at most A rows per
private row per stage, plus sorting and hashing): see the README's "What remains outside the
model".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from core.dpsql.catalog import Catalog
from core.dpsql.check.lineage import Lineage
from core.errors import InputError

# The most rows one private row may produce through a query's joins (at every step).
MAX_AMPLIFICATION = 10_000
# Rows per unit each private table keeps when it is joined with another private relation.
JOIN_ROWS_PER_UNIT = 100


class Multiplicities:
    """Per-column largest count of rows sharing one value, computed on demand (public data)."""

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame
        self._columns = {str(c).lower(): c for c in frame.columns}
        self._known: dict[tuple[str, bool], int] = {}

    def get(self, column: str, null_safe: bool = False) -> int | None:
        name = column.lower()
        if name not in self._columns:
            return None
        if (name, null_safe) not in self._known:
            values = self._frame[self._columns[name]]
            counts = values.value_counts(dropna=True)
            top = int(counts.iloc[0]) if len(counts) else 0
            self._known[(name, null_safe)] = (
                max(top, int(values.isna().sum())) if null_safe else top
            )
        return self._known[(name, null_safe)]


@dataclass(frozen=True)
class Public:
    """A public relation: at most `rows` rows; `mult(column)`: most rows sharing one value of
    that column (qualified `alias.column` inside a scope, the output name outside)."""

    rows: int
    columns: dict[str, tuple[int, int]] = field(default_factory=dict)  # (non-NULL, NULL-safe)
    table: Multiplicities | None = None  # a base table's statistics, by column name

    def mult(self, column: str, null_safe: bool = False) -> int:
        column = column.lower()
        if column in self.columns:
            found = self.columns[column][1 if null_safe else 0]
        elif self.table is not None:
            found = self.table.get(column.rsplit(".", 1)[-1], null_safe)
        else:
            found = None
        return self.rows if found is None else min(self.rows, found)

    def qualified(self, alias: str, names: list[str]) -> Public:
        """The same relation with its columns named `alias.column` (as a FROM source)."""
        cols = {f"{alias}.{n}".lower(): (self.mult(n), self.mult(n, True)) for n in names}
        return Public(self.rows, cols)

    def scaled(self, factor: int) -> Public:
        cols = {c: (_cap(a * factor), _cap(b * factor)) for c, (a, b) in self.columns.items()}
        return Public(_cap(self.rows * factor), cols)


@dataclass(frozen=True)
class Private:
    """A private relation: `amp` rows per private base row, `per_unit` rows per unit."""

    amp: int
    per_unit: int


@dataclass(frozen=True)
class RowCap:
    """A private table that keeps at most `rows` rows per unit (`uid`) in the executed SQL."""

    table: str
    uid: str
    columns: tuple[str, ...]
    rows: int = JOIN_ROWS_PER_UNIT


@dataclass(frozen=True)
class Amplification:
    """The result of the check: the query's bound, and the private tables to cap at
    JOIN_ROWS_PER_UNIT rows per unit (all of those the query reads, when it joins private
    relations with each other; none otherwise)."""

    bound: int
    row_caps: tuple[RowCap, ...] = ()


Relation = Public | Private


class _Refused(Exception):
    def __init__(self, bound: int, where: str):
        self.bound, self.where = bound, where


class Bounder:
    """Computes the bound over the qualified query's scopes (memoised per scope)."""

    def __init__(self, lineage: Lineage, catalog: Catalog):
        self.lineage = lineage
        self.catalog = catalog
        self.private_joins = False
        self.worst = 1
        self._memo: dict[int, Relation] = {}
        self._tables: dict[str, Public] = {}

    # -- relations ---------------------------------------------------------------------------
    def source(self, node) -> Relation:
        if isinstance(node, exp.Table):
            spec = self.catalog.get(node.name)
            if spec is None:  # not a catalogue table (refused elsewhere): bounds nothing
                return Public(0)
            if spec.private:
                return Private(1, JOIN_ROWS_PER_UNIT)
            if spec.name not in self._tables:
                self._tables[spec.name] = Public(len(spec.frame), {}, Multiplicities(spec.frame))
            return self._tables[spec.name]
        key = id(node)
        if key not in self._memo:
            self._memo[key] = self.scope(node)
        return self._memo[key]

    def scope(self, scope: Scope) -> Relation:
        select = scope.expression
        if isinstance(select, exp.SetOperation):
            parts = [self.source(s) for s in scope.union_scopes]
            private = [p for p in parts if isinstance(p, Private)]
            if private:  # refused elsewhere (V016); bound it anyway
                return Private(max(p.amp for p in private), max(p.per_unit for p in private))
            return Public(_cap(sum(p.rows for p in parts)))
        if not isinstance(select, exp.Select):
            return Public(0)
        relation = self.from_clause(scope, select)
        relation = self.correlated_subqueries(scope, relation)
        return self.output(scope, select, relation)

    def from_clause(self, scope: Scope, select: exp.Select) -> Relation:
        from_ = select.args.get("from_")
        if from_ is None:
            return Public(1)
        left = self.named(scope, from_.this)
        for join in select.args.get("joins") or []:
            right = self.named(scope, join.this)
            left = self.join(left, right, join, join.this.alias_or_name)
            self.check(left, join)
        return left

    def named(self, scope: Scope, node: exp.Expression) -> Relation:
        alias = node.alias_or_name
        source = scope.sources.get(alias)
        if source is None:
            return Public(0)
        relation = self.source(source)
        if isinstance(relation, Public):  # the columns this scope names, as alias.column
            names = {c.name for c in scope.columns if c.table.lower() == alias.lower()}
            return relation.qualified(alias, sorted(names))
        return relation

    def join(self, left: Relation, right: Relation, join: exp.Join, alias: str) -> Relation:
        if isinstance(left, Public) and isinstance(right, Public):
            fan = _fan_out(right, join, alias)  # X rows one L row meets
            back = _fan_out_left(left, join, alias)  # L rows one X row meets
            cols = {c: (_cap(a * fan), _cap(b * fan)) for c, (a, b) in left.columns.items()}
            cols |= {c: (_cap(a * back), _cap(b * back)) for c, (a, b) in right.columns.items()}
            return Public(_cap(left.rows * fan), cols)
        if isinstance(right, Public):  # private L, public X: each L row meets <= fan X rows
            fan = _fan_out(right, join, alias)
            return Private(_cap(left.amp * fan), _cap(left.per_unit * fan))
        if isinstance(left, Public):  # public L, private X: each X row meets <= fan L rows
            fan = _fan_out_left(left, join, alias)
            return Private(_cap(right.amp * fan), _cap(right.per_unit * fan))
        self.private_joins = True  # private ⋈ private, on the unit (V010)
        amp = max(left.amp * right.per_unit, right.amp * left.per_unit)
        return Private(_cap(amp), _cap(left.per_unit * right.per_unit))

    def correlated_subqueries(self, scope: Scope, relation: Relation) -> Relation:
        """A correlated subquery (in WHERE, ON, the select list...) may run once per row."""
        if not isinstance(relation, Private):
            return relation
        for sub in scope.subquery_scopes:
            if sub.is_correlated_subquery and isinstance(sub.expression, exp.Select):
                size = self.size(sub)
                relation = Private(_cap(relation.amp * size), relation.per_unit)
                self.check(relation, sub.expression)
        return relation

    def size(self, scope: Scope) -> int:
        """Rows a subquery's FROM clause may produce: its work per evaluation."""
        relation = self.from_clause(scope, scope.expression)
        return relation.rows if isinstance(relation, Public) else relation.amp

    def output(self, scope: Scope, select: exp.Select, relation: Relation) -> Relation:
        """GROUP BY / aggregates / LIMIT of a scope (they never increase a bound)."""
        group = select.args.get("group")
        keys = list(group.expressions) if group is not None else []
        if isinstance(relation, Private):
            if len(keys) == 1 and self.lineage.is_unit(scope, keys[0]):
                return Private(relation.amp, 1)  # one row per unit
            return relation
        rows = relation.rows
        if keys == [] and any(
            isinstance(n, exp.AggFunc) for e in select.expressions for n in e.walk()
        ):
            rows = 1
        limit = select.args.get("limit")
        if limit is not None and isinstance(limit.expression, exp.Literal):
            rows = min(rows, max(0, int(float(limit.expression.this))))
        cols: dict[str, tuple[int, int]] = {}
        for item in select.expressions:
            inner = item.this if isinstance(item, exp.Alias) else item
            if not isinstance(inner, exp.Column):
                continue
            qualified = f"{inner.table}.{inner.name}"
            distinct = len(keys) == 1 and keys[0] == inner
            a = 1 if distinct else min(rows, relation.mult(qualified))
            b = 1 if distinct else min(rows, relation.mult(qualified, True))
            cols[item.alias_or_name.lower()] = (a, b)
        return Public(rows, cols)

    def check(self, relation: Relation, where: exp.Expression) -> None:
        if isinstance(relation, Private):
            self.worst = max(self.worst, relation.amp)
            if relation.amp > MAX_AMPLIFICATION:
                raise _Refused(relation.amp, where.sql(dialect="duckdb")[:80])


def _cap(value: float) -> int:
    """Keep bounds finite and printable (anything above the limit is refused anyway)."""
    return int(min(value, 10**18))


def _conjuncts(join: exp.Join) -> list[exp.Expression]:
    on = join.args.get("on")
    if on is None:
        return []
    return list(on.flatten()) if isinstance(on, exp.And) else [on]


def _reads(node: exp.Expression, alias: str) -> bool:
    return any(c.table.lower() == alias.lower() for c in node.find_all(exp.Column))


def _fan_out(x: Public, join: exp.Join, alias: str) -> int:
    """Most rows of the public relation `x` (joined as `alias`) that one row of the other side
    meets: the smallest multiplicity of an equated plain key column, else all of x's rows."""
    fan = x.rows
    for c in _conjuncts(join):
        if isinstance(c, exp.EQ | exp.NullSafeEQ):
            for side, other in ((c.this, c.expression), (c.expression, c.this)):
                if (
                    isinstance(side, exp.Column)
                    and side.table.lower() == alias.lower()
                    and not _reads(other, alias)
                ):
                    key = f"{side.table}.{side.name}"
                    fan = min(fan, x.mult(key, null_safe=isinstance(c, exp.NullSafeEQ)))
    return max(1, fan)


def _fan_out_left(left: Public, join: exp.Join, alias: str) -> int:
    """Most rows of the public left side that one row of the right side (`alias`) meets: an
    equality between a plain left column and an expression of the right side alone."""
    fan = left.rows
    for c in _conjuncts(join):
        if isinstance(c, exp.EQ | exp.NullSafeEQ):
            for side, other in ((c.this, c.expression), (c.expression, c.this)):
                only_right = _reads(other, alias) and all(
                    col.table.lower() == alias.lower() for col in other.find_all(exp.Column)
                )
                if isinstance(side, exp.Column) and not _reads(side, alias) and only_right:
                    key = f"{side.table}.{side.name}"
                    fan = min(fan, left.mult(key, null_safe=isinstance(c, exp.NullSafeEQ)))
    return max(1, fan)


def check_amplification(lineage: Lineage, catalog: Catalog) -> Amplification:
    """V040: refuse a query whose public bound on rows per private row exceeds the limit."""
    bounder = Bounder(lineage, catalog)
    try:
        bounder.source(lineage.root)
    except _Refused as refused:
        bound = "more than 10^18" if refused.bound >= 10**18 else f"{refused.bound:,}"
        raise InputError(
            f"DPX-V040 one private row could produce {bound} rows at `{refused.where}` "
            f"(the limit is {MAX_AMPLIFICATION:,}). Rule: the work a query does is bounded by "
            "public facts before any data is read, because whether and when it finishes is "
            "released; ON TRUE, CROSS, non-equi and OR joins meet every row of a public table, "
            f"and a private table joined to another keeps {JOIN_ROWS_PER_UNIT} rows per unit. "
            "Fix: join public tables with an equality on their key column, join fewer tables, "
            "or aggregate per unit in a subquery (GROUP BY uid) before joining."
        ) from None
    if not bounder.private_joins:
        return Amplification(bounder.worst)
    names = sorted({t.name.lower() for t in lineage.root.expression.find_all(exp.Table)})
    specs = [catalog.get(n) for n in names]
    caps = tuple(
        RowCap(spec.name, spec.uid, tuple(spec.columns))
        for spec in specs
        if spec is not None and spec.private
    )
    return Amplification(bounder.worst, caps)
