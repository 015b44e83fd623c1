"""Normalise a parsed DP SELECT (either form) into the `DPQuery` IR, checking options and calls.

Each refusal is an `InputError` with a code (spec §6), the rule broken and how to fix the query.
"""

from __future__ import annotations

import math

from sqlglot import exp

from core.dpsql.dialect import DPSQL, Clamped, DPClause
from core.dpsql.ir import (
    DPAggregate,
    DPOptions,
    DPQuery,
    OutputItem,
    PostProcessing,
    SourceSpan,
)
from core.errors import InputError

OPTION_NAMES = {
    "epsilon",
    "delta",
    "max_groups_contributed",
    "kappa",
    "privacy_unit_column",
    "max_rows_per_group",
    "threshold_weight",
    "quantile_grid_size",
    "min_privacy_units_per_group",
    "group_selection_strategy",
}
PAPER_AGGS = {
    "ANON_COUNT",
    "ANON_SUM",
    "ANON_AVG",
    "ANON_VAR",
    "ANON_VAR_POP",
    "ANON_STDDEV",
    "ANON_STDDEV_POP",
    "ANON_NTILE",
    "ANON_PERCENTILE_CONT",
    "ANON_MIN",
    "ANON_MAX",
    "ANON_MEDIAN",
}
ZETA_AGGS = {"COUNT", "SUM", "AVG", "VAR_POP", "STDDEV_POP", "PERCENTILE_CONT"}
ZETA_EQUIVALENT = {
    "ANON_COUNT": "COUNT(x, contribution_bounds_per_group => (0, U))",
    "ANON_SUM": "SUM(x, contribution_bounds_per_group => (L, U))",
    "ANON_AVG": "AVG(x, contribution_bounds_per_group => (L, U))",
    "ANON_VAR": "VAR_POP(x, contribution_bounds_per_row => (L, U))",
    "ANON_STDDEV": "STDDEV_POP(x, contribution_bounds_per_row => (L, U))",
    "ANON_NTILE": "PERCENTILE_CONT(x, p, contribution_bounds_per_row => (L, U))",
}
PAPER_EQUIVALENT = {
    "COUNT": "ANON_COUNT(x, U)",
    "SUM": "ANON_SUM(x, L, U)",
    "AVG": "ANON_AVG(x, L, U)",
    "VAR_POP": "ANON_VAR(x, L, U)",
    "STDDEV_POP": "ANON_STDDEV(x, L, U)",
    "PERCENTILE_CONT": "ANON_NTILE(x, p, L, U)",
}
# Plain SQL aggregates: inside a DP SELECT they would publish exact values.
PLAIN_AGG_TYPES = (exp.AggFunc,)


def span_of(node: exp.Expression) -> SourceSpan:
    meta = node.meta or {}
    return SourceSpan(meta.get("line"), meta.get("col"), node.sql(dialect=DPSQL)[:120])


def _where(node: exp.Expression) -> str:
    s = span_of(node)
    return f" (line {s.line}, column {s.column})" if s.line else ""


# -- options ---------------------------------------------------------------------------------
def _literal_value(node: exp.Expression):
    if isinstance(node, exp.Neg):
        inner = _literal_value(node.this)
        return -inner if isinstance(inner, (int, float)) else None
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        try:
            return int(text)
        except ValueError:
            return float(text)
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Div):
        a, b = _literal_value(node.this), _literal_value(node.expression)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b != 0:
            return a / b
    return node


def read_options(clause: DPClause, defaults: dict) -> DPOptions:
    """Options written in the query win over `defaults` (CLI flags, dataset policy)."""
    given: dict = {}
    for item in clause.expressions or []:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise InputError(
                f"DPX-V033 malformed option `{item.sql(dialect=DPSQL)}`. Rule: OPTIONS holds name = value "
                "pairs. Fix: write e.g. OPTIONS (epsilon = 1, delta = 1e-5)."
            )
        name = item.this.name.lower()
        if ("max_groups_contributed" if name == "kappa" else name) in given:
            raise InputError(f"DPX-V033 option `{name}` is given twice. Fix: keep one value.")
        if name not in OPTION_NAMES:
            raise InputError(
                f"DPX-V033 unknown option `{name}`. Rule: only "
                f"{', '.join(sorted(OPTION_NAMES))} are accepted. Fix: remove or rename it."
            )
        given["max_groups_contributed" if name == "kappa" else name] = _literal_value(
            item.expression
        )
    merged = {k: v for k, v in defaults.items() if v is not None}
    merged.update({k: v for k, v in given.items()})
    return _checked_options(merged)


def _checked_options(o: dict) -> DPOptions:
    strategy = str(o.get("group_selection_strategy", "LAPLACE_THRESHOLD")).upper()
    if strategy not in ("LAPLACE_THRESHOLD", "PUBLIC_GROUPS"):
        raise InputError(
            f"DPX-V033 group_selection_strategy = {strategy} is unknown. "
            "Fix: use LAPLACE_THRESHOLD (default) or PUBLIC_GROUPS."
        )
    public_groups = strategy == "PUBLIC_GROUPS"
    if public_groups and o.get("delta") is None:
        o = {**o, "delta": 0.0}  # no thresholding: delta is not used
    eps = o.get("epsilon")
    if eps is None:
        raise InputError(
            "DPX-V030 Differential privacy option EPSILON must be set and non-NULL. "
            "Fix: add epsilon = 1 to OPTIONS (or pass --epsilon)."
        )
    if not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise InputError(
            f"DPX-V030 epsilon must be a finite number > 0, but is {eps}. "
            "Fix: use e.g. epsilon = 1 (smaller is more private)."
        )
    delta = o.get("delta")
    if delta is None:
        raise InputError(
            "DPX-V031 Differential privacy option DELTA must be set. Rule: thresholding of "
            "groups needs delta > 0. Fix: add delta = 1e-5 to OPTIONS (or pass --delta)."
        )
    if not isinstance(delta, (int, float)) or not 0 <= delta <= 1 or math.isnan(delta):
        raise InputError(
            f"DPX-V031 Delta must be in the inclusive interval [0,1], but is {delta}. "
            "Fix: use e.g. delta = 1e-5."
        )
    if delta == 1:
        raise InputError(
            "DPX-V031 delta = 1 gives no privacy guarantee (any group could be released). "
            "Fix: use delta < 1, e.g. 1e-5."
        )
    if delta == 0 and not public_groups:
        raise InputError(
            "DPX-V031 delta = 0 with group thresholding means nothing could ever be released "
            "(tau is infinite). Fix: use delta > 0, e.g. 1e-5."
        )
    cu = o.get("max_groups_contributed")
    if cu is None:
        raise InputError(
            "DPX-V032 max_groups_contributed (C_u) must be set. Rule: each privacy unit may "
            "influence at most C_u groups; it is never assumed. Fix: add "
            "max_groups_contributed = 1 to OPTIONS (or pass --max-groups)."
        )
    if not isinstance(cu, int) or isinstance(cu, bool) or cu < 1:
        raise InputError(
            f"DPX-V032 max_groups_contributed must be an integer >= 1, but is {cu}. "
            "Fix: use e.g. max_groups_contributed = 2."
        )
    k = o.get("max_rows_per_group", 5)
    if not isinstance(k, int) or k < 1:
        raise InputError(f"DPX-V033 max_rows_per_group must be an integer >= 1, got {k}.")
    weight = o.get("threshold_weight", 1.0)
    if not isinstance(weight, (int, float)) or not weight > 0:
        raise InputError(f"DPX-V033 threshold_weight must be > 0, got {weight}.")
    grid = o.get("quantile_grid_size", 1001)
    if not isinstance(grid, int) or grid < 2:
        raise InputError(f"DPX-V033 quantile_grid_size must be an integer >= 2, got {grid}.")
    m = o.get("min_privacy_units_per_group")
    if m is not None and (not isinstance(m, int) or m < 1):
        raise InputError(f"DPX-V033 min_privacy_units_per_group must be an integer >= 1, got {m}.")
    uid = o.get("privacy_unit_column")
    return DPOptions(
        float(eps),
        float(delta),
        cu,
        None if uid is None else str(uid),
        k,
        float(weight),
        grid,
        m,
        public_groups,
    )


# -- aggregates --------------------------------------------------------------------------------
def _number(node: exp.Expression, what: str, call: exp.Expression) -> float:
    value = _literal_value(node)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(
            f"DPX-V022 {what} of `{call.sql(dialect=DPSQL)}`{_where(call)} must be a numeric literal. "
            "Rule: bounds are public constants, never data. Fix: write e.g. 0 and 100."
        )
    return float(value)


def _bounds(low, high, call) -> tuple[float, float]:
    lo, hi = _number(low, "the lower bound", call), _number(high, "the upper bound", call)
    if lo > hi:
        raise InputError(
            f"DPX-V022 bounds of `{call.sql(dialect=DPSQL)}`{_where(call)} have L = {lo:g} > U = {hi:g}. "
            "Fix: swap them so that L <= U."
        )
    return lo, hi


def _missing_bounds(call) -> InputError:
    return InputError(
        f"DPX-V021 `{call.sql(dialect=DPSQL)}`{_where(call)} has no contribution bounds. Rule: give the smallest "
        "and largest value one unit may add to a group; bounds are never inferred from data. "
        "Fix: e.g. ANON_SUM(x, 0, 100) or SUM(x, contribution_bounds_per_group => (0, 100))."
    )


class AggregateReader:
    """Turns aggregate call nodes into `DPAggregate`s for one query form."""

    def __init__(self, form: str, uid_names: set[str]):
        self.form = form
        self.uid_names = {u.lower() for u in uid_names}

    def is_aggregate(self, node: exp.Expression) -> bool:
        if isinstance(node, exp.Anonymous):
            return node.name.upper() in PAPER_AGGS | ZETA_AGGS
        return isinstance(node, PLAIN_AGG_TYPES)

    def read(self, node: exp.Expression, alias: str) -> DPAggregate:
        span = span_of(node)
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
            return self._count_distinct(node.this, node, alias, span)
        if isinstance(node, exp.Anonymous):
            name = node.name.upper()
            if name in PAPER_AGGS:
                if self.form != "ANONYMIZATION":
                    raise self._form_mix(node, name, ZETA_EQUIVALENT.get(name, "the ZetaSQL form"))
                return self._paper(node, name, alias, span)
            if self.form != "DIFFERENTIAL_PRIVACY":
                raise self._form_mix(node, name, PAPER_EQUIVALENT.get(name, "the ANON_ form"))
            return self._zeta(node, name, alias, span)
        if self.form == "DIFFERENTIAL_PRIVACY" and node.key.upper() in {
            "COUNT",
            "SUM",
            "AVG",
            "VARIANCEPOP",
            "STDDEVPOP",
        }:
            raise _missing_bounds(node)
        hint = (
            "use ANON_SUM(x, L, U) / ANON_COUNT(*, U) / ANON_AVG(x, L, U)"
            if self.form == "ANONYMIZATION"
            else "add contribution_bounds_per_group => (L, U)"
        )
        raise InputError(
            f"DPX-V020 `{node.sql(dialect=DPSQL)}`{_where(node)} is not a differentially private aggregate. "
            f"Rule: a DP SELECT may only aggregate with DP functions. Fix: {hint}."
        )

    def _form_mix(self, node, name, equivalent) -> InputError:
        other = (
            "WITH DIFFERENTIAL_PRIVACY" if self.form == "ANONYMIZATION" else "WITH ANONYMIZATION"
        )
        return InputError(
            f"DPX-V029 `{name}`{_where(node)} belongs to the {other} form but this query is "
            f"SELECT WITH {self.form}. Fix: write {equivalent} instead."
        )

    def _count_distinct(self, distinct: exp.Distinct, node, alias, span) -> DPAggregate:
        cols = distinct.expressions
        if (
            len(cols) != 1
            or not isinstance(cols[0], exp.Column)
            or (cols[0].name.lower() not in self.uid_names)
        ):
            raise InputError(
                f"DPX-V024 `{node.sql(dialect=DPSQL)}`{_where(node)}: COUNT(DISTINCT col) is only allowed on "
                "the privacy unit. Rule: per-unit pre-aggregation cannot de-duplicate values "
                "across units (Wilson). Fix: count distinct units with COUNT(DISTINCT uid), or "
                "count rows with a bounded count."
            )
        return DPAggregate("COUNT_UNITS", None, None, None, "none", None, 1.0, alias, span)

    def _paper(self, node: exp.Anonymous, name: str, alias, span) -> DPAggregate:
        args = list(node.expressions)
        if name == "ANON_COUNT" and len(args) == 1 and isinstance(args[0], exp.Distinct):
            return self._count_distinct(args[0], node, alias, span)
        clamped = [a for a in args if isinstance(a, Clamped)]
        lo = hi = None
        if clamped:
            c = clamped[0]
            lo, hi = _bounds(c.args["low"], c.args["high"], node)
            args = [a.this if isinstance(a, Clamped) else a for a in args]
        if name == "ANON_COUNT":
            if lo is None:
                if len(args) != 2:
                    raise _missing_bounds(node)
                lo, hi = 0.0, _number(args[1], "the upper bound", node)
            if lo < 0 or hi < lo:
                raise InputError(
                    f"DPX-V022 `{node.sql(dialect=DPSQL)}`{_where(node)}: count bounds need 0 <= L <= U. "
                    "Fix: e.g. ANON_COUNT(*, 5)."
                )
            star = isinstance(args[0], exp.Star)
            kind = "COUNT_ROWS" if star else "COUNT_VALUES"
            return DPAggregate(
                kind, None if star else args[0], lo, hi, "group", None, 1.0, alias, span
            )
        quantile_p = {"ANON_MIN": 0.0, "ANON_MAX": 1.0, "ANON_MEDIAN": 0.5}
        if name in ("ANON_NTILE", "ANON_PERCENTILE_CONT"):
            if lo is None:
                if len(args) != 4:
                    raise _missing_bounds(node)
                lo, hi = _bounds(args[2], args[3], node)
            p = self._p(args[1] if len(args) > 1 else None, node)
            return DPAggregate("QUANTILE", args[0], lo, hi, "row", p, 1.0, alias, span)
        if lo is None:
            if len(args) != 3:
                raise _missing_bounds(node)
            lo, hi = _bounds(args[1], args[2], node)
        if name in quantile_p:
            return DPAggregate(
                "QUANTILE", args[0], lo, hi, "row", quantile_p[name], 1.0, alias, span
            )
        kind = {
            "ANON_SUM": "SUM",
            "ANON_AVG": "AVG",
            "ANON_VAR": "VAR",
            "ANON_VAR_POP": "VAR",
            "ANON_STDDEV": "STDDEV",
            "ANON_STDDEV_POP": "STDDEV",
        }[name]
        clamp = "row" if kind in ("VAR", "STDDEV") else "group"
        return DPAggregate(kind, args[0], lo, hi, clamp, None, 1.0, alias, span)

    def _p(self, node, call) -> float:
        if node is None:
            raise InputError(
                f"DPX-V025 `{call.sql(dialect=DPSQL)}`{_where(call)} needs a percentile p."
            )
        p = _number(node, "the percentile p", call)
        if not 0 <= p <= 1:
            raise InputError(
                f"DPX-V025 percentile p = {p:g} in `{call.sql(dialect=DPSQL)}`{_where(call)} is outside "
                "[0, 1]. Fix: use e.g. 0.5 for the median."
            )
        return p

    def _zeta(self, node: exp.Anonymous, name: str, alias, span) -> DPAggregate:
        positional, named = [], {}
        for a in node.expressions:
            if isinstance(a, exp.Kwarg):
                if a.this.name.lower() in named:
                    raise InputError(
                        f"DPX-V033 named argument {a.this.name} is given twice in "
                        f"`{node.sql(dialect=DPSQL)}`. Fix: keep one."
                    )
                named[a.this.name.lower()] = a.expression
            else:
                positional.append(a)
        if not positional:
            raise InputError(
                f"DPX-V020 `{node.sql(dialect=DPSQL)}`{_where(node)} names no column. Fix: e.g. "
                f"{name}(x, ...) or COUNT(*, ...)."
            )
        weight = 1.0
        if "weight" in named:
            weight = _number(named.pop("weight"), "weight", node)
            if weight <= 0:
                raise InputError(f"DPX-V033 weight must be > 0 in `{node.sql(dialect=DPSQL)}`.")
        row_level = name in ("VAR_POP", "STDDEV_POP", "PERCENTILE_CONT")
        want = "contribution_bounds_per_row" if row_level else "contribution_bounds_per_group"
        wrong = "contribution_bounds_per_group" if row_level else "contribution_bounds_per_row"
        if wrong in named:
            raise InputError(
                f"DPX-V023 `{name}`{_where(node)} does not accept {wrong}. Rule: "
                f"{'row' if row_level else 'group'}-level bounds apply to {name}. "
                f"Fix: write {want} => (L, U)."
            )
        unknown = set(named) - {want}
        if unknown:
            raise InputError(
                f"DPX-V033 unknown named argument {sorted(unknown)[0]} in `{node.sql(dialect=DPSQL)}`. "
                f"Fix: use {want} => (L, U)."
            )
        if want not in named:
            raise _missing_bounds(node)
        pair = named[want]
        if not isinstance(pair, exp.Tuple) or len(pair.expressions) != 2:
            raise InputError(
                f"DPX-V022 {want} in `{node.sql(dialect=DPSQL)}` must be a pair (L, U). Fix: e.g. (0, 100)."
            )
        lo, hi = _bounds(pair.expressions[0], pair.expressions[1], node)
        if name == "COUNT":
            if lo < 0:
                raise InputError(
                    f"DPX-V022 `{node.sql(dialect=DPSQL)}`{_where(node)}: count bounds need 0 <= L <= U."
                )
            star = isinstance(positional[0], exp.Star)
            kind = "COUNT_ROWS" if star else "COUNT_VALUES"
            return DPAggregate(
                kind, None if star else positional[0], lo, hi, "group", None, weight, alias, span
            )
        if name == "PERCENTILE_CONT":
            p = self._p(positional[1] if len(positional) > 1 else None, node)
            return DPAggregate("QUANTILE", positional[0], lo, hi, "row", p, weight, alias, span)
        kind = {"SUM": "SUM", "AVG": "AVG", "VAR_POP": "VAR", "STDDEV_POP": "STDDEV"}[name]
        return DPAggregate(
            kind, positional[0], lo, hi, "row" if row_level else "group", None, weight, alias, span
        )


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
                raise InputError(f"DPX-V027 GROUP BY {pos} does not name a select item.")
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
