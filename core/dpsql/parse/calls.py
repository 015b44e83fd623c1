"""Turn DP aggregate calls of either form (paper ANON_* or ZetaSQL named arguments) into
`DPAggregate`s: kind, argument, contribution bounds and clamping level (spec §1.2, §2.4).

Bounds are public literals, never data; each refusal names its rule and a fix.
"""

from __future__ import annotations

import math

from sqlglot import exp

from core.dpsql.parse.dialect import DPSQL, Clamped
from core.dpsql.parse.ir import AggKind, DPAggregate, SourceSpan
from core.dpsql.parse.options import literal_value
from core.dpsql.parse.spellings import (
    DP_NAMES,
    Clamp,
    Form,
    Spelling,
    dp_spelling_of,
    names,
    spelling,
)
from core.errors import InputError

# Plain SQL aggregates: inside a DP SELECT they would publish exact values.
PLAIN_AGG_TYPES = (exp.AggFunc,)


def span_of(node: exp.Expression) -> SourceSpan:
    meta = node.meta or {}
    return SourceSpan(meta.get("line"), meta.get("col"), node.sql(dialect=DPSQL)[:120])


def where_text(node: exp.Expression) -> str:
    s = span_of(node)
    return f" (line {s.line}, column {s.column})" if s.line else ""


def _number(node: exp.Expression, what: str, call: exp.Expression) -> float:
    value = literal_value(node)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(
            f"DPX-V022 {what} of `{call.sql(dialect=DPSQL)}`{where_text(call)} must be a numeric literal. "
            "Rule: bounds are public constants, never data. Fix: write e.g. 0 and 100."
        )
    return float(value)


def _bounds(low, high, call) -> tuple[float, float]:
    lo, hi = _number(low, "the lower bound", call), _number(high, "the upper bound", call)
    if lo > hi:
        raise InputError(
            f"DPX-V022 bounds of `{call.sql(dialect=DPSQL)}`{where_text(call)} have L = {lo:g} > U = {hi:g}. "
            "Fix: swap them so that L <= U."
        )
    return lo, hi


# How each aggregate writes its bounds, for fix hints that fit the aggregate (x: its argument).
def _argument_text(call: exp.Expression) -> str:
    first = call.this if not isinstance(call, exp.Anonymous) else next(iter(call.expressions), None)
    if isinstance(first, Clamped):
        first = first.this
    return "x" if first is None else first.sql(dialect=DPSQL)[:60]


def _function_name(call: exp.Expression) -> str:
    return call.name.upper() if isinstance(call, exp.Anonymous) else call.key.upper()


def _missing_bounds(call, form: Form) -> InputError:
    """V021 with a fix in the call's own spelling (a plain aggregate: its DP spelling in the
    query's form)."""
    name = _function_name(call)
    found = spelling(name) or dp_spelling_of(name, form)
    example = found.example if found is not None else "{x} with contribution bounds"
    return InputError(
        f"DPX-V021 `{call.sql(dialect=DPSQL)}`{where_text(call)} has no contribution bounds. "
        "Rule: give the smallest and largest value one unit may add (only COUNT infers its "
        f"bounds, privately). Fix: e.g. {example.format(x=_argument_text(call))}."
    )


def _split_named(node: exp.Anonymous) -> tuple[list[exp.Expression], dict[str, exp.Expression]]:
    """Positional arguments and `name => value` arguments (each name at most once)."""
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
    return positional, named


def _weight(named: dict[str, exp.Expression], node: exp.Expression) -> float:
    """The budget weight `weight => w` (spec §1.3, §2.10; default 1); removed from `named`."""
    if "weight" not in named:
        return 1.0
    weight = _number(named.pop("weight"), "weight", node)
    if weight <= 0:
        raise InputError(
            f"DPX-V033 weight must be > 0 in `{node.sql(dialect=DPSQL)}`. "
            "Fix: e.g. weight => 1 (the default)."
        )
    return weight


def _check_arity(node: exp.Anonymous, said: Spelling, args: list, clamped: bool) -> None:
    """V021: ANON_SUM(x, L, U), ANON_COUNT(x, U), ANON_NTILE(x, p, L, U); with CLAMPED BETWEEN
    L AND U the bounds are not repeated. Fewer means no bounds; more is refused, not ignored
    (a budget weight goes by name: weight => w)."""
    name, shape = said.name, said.arguments
    want = [a for a in shape if a not in ("L", "U")] if clamped else list(shape)
    if len(args) < len(want) and not clamped:
        raise _missing_bounds(node, Form.PAPER)
    if len(args) > len(want):
        raise InputError(
            f"DPX-V021 `{node.sql(dialect=DPSQL)}`{where_text(node)} has {len(args)} positional "
            f"arguments. Rule: {name} takes ({', '.join(want)})"
            + (" with CLAMPED BETWEEN L AND U" if clamped else "")
            + ". Fix: remove the extra arguments; a budget weight goes by name, e.g. "
            "ANON_SUM(x, 0, 100, weight => 2)."
        )


class AggregateReader:
    """Turns aggregate call nodes into `DPAggregate`s for one query form."""

    def __init__(self, form: str, uid_names: set[str]):
        self.form = Form(form)
        self.uid_names = {u.lower() for u in uid_names}

    def is_aggregate(self, node: exp.Expression) -> bool:
        if isinstance(node, exp.Anonymous):
            return node.name.upper() in DP_NAMES
        return isinstance(node, PLAIN_AGG_TYPES)

    def read(self, node: exp.Expression, alias: str) -> DPAggregate:
        span = span_of(node)
        if isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
            return self._count_distinct(node.this, node, alias, span)
        if isinstance(node, exp.Anonymous):
            said = spelling(node.name)
            if said.form is not self.form:
                raise self._form_mix(node, said.name, said.equivalent)
            if said.form is Form.PAPER:
                return self._paper(node, said, alias, span)
            return self._zeta(node, said, alias, span)
        name = node.key.upper()
        if self.form is Form.ZETA and isinstance(node, exp.Count):
            return self._implicit_count(node.this, 1.0, alias, span)
        dp = dp_spelling_of(name, self.form)
        if self.form is Form.ZETA and dp is not None:
            raise _missing_bounds(node, self.form)
        x = _argument_text(node)
        if dp is not None:
            hint = f"write {dp.example.format(x=x)}"
        elif self.form is Form.PAPER:
            hint = "use a DP aggregate such as ANON_COUNT(*), ANON_SUM(x, 0, 100)"
        else:
            *most, last = names(Form.ZETA)
            hint = f"use {', '.join(most)} or {last}"
        raise InputError(
            f"DPX-V020 `{node.sql(dialect=DPSQL)}`{where_text(node)} is not a differentially private aggregate. "
            f"Rule: a DP SELECT may only aggregate with DP functions. Fix: {hint}."
        )

    def _implicit_count(self, arg: exp.Expression, weight: float, alias, span) -> DPAggregate:
        """COUNT(*) / COUNT(x) without contribution bounds (either form): bounds are inferred
        from the data privately, as ZetaSQL and BigQuery document (see
        `core.dpsql.aggregates.implicit_count`)."""
        star = isinstance(arg, exp.Star)
        kind = AggKind.IMPLICIT_COUNT_ROWS if star else AggKind.IMPLICIT_COUNT_VALUES
        return DPAggregate(
            kind, None if star else arg, None, None, "implicit", None, weight, alias, span
        )

    def _form_mix(self, node, name, equivalent) -> InputError:
        other = (
            "WITH DIFFERENTIAL_PRIVACY" if self.form == "ANONYMIZATION" else "WITH ANONYMIZATION"
        )
        return InputError(
            f"DPX-V029 `{name}`{where_text(node)} belongs to the {other} form but this query is "
            f"SELECT WITH {self.form}. Fix: write {equivalent} instead."
        )

    def _count_distinct(
        self, distinct: exp.Distinct, node, alias, span, weight: float = 1.0
    ) -> DPAggregate:
        cols = distinct.expressions
        if (
            len(cols) != 1
            or not isinstance(cols[0], exp.Column)
            or (cols[0].name.lower() not in self.uid_names)
        ):
            raise InputError(
                f"DPX-V024 `{node.sql(dialect=DPSQL)}`{where_text(node)}: COUNT(DISTINCT col) is only allowed on "
                "the privacy unit. Rule: per-unit pre-aggregation cannot de-duplicate values "
                "across units (Wilson). Fix: count distinct units with COUNT(DISTINCT uid), or "
                "count rows with a bounded count."
            )
        return DPAggregate(AggKind.COUNT_UNITS, None, None, None, "none", None, weight, alias, span)

    def _paper(self, node: exp.Anonymous, said: Spelling, alias, span) -> DPAggregate:
        name = said.name
        args, named = _split_named(node)
        weight = _weight(named, node)
        if named:
            raise InputError(
                f"DPX-V033 unknown named argument {sorted(named)[0]} in "
                f"`{node.sql(dialect=DPSQL)}`{where_text(node)}. Rule: {name} takes its bounds "
                "as positional arguments and only weight => w by name. Fix: e.g. "
                "ANON_SUM(x, 0, 100, weight => 2)."
            )
        if said.is_count and len(args) == 1 and isinstance(args[0], exp.Distinct):
            return self._count_distinct(args[0], node, alias, span, weight)
        clamped = [a for a in args if isinstance(a, Clamped)]
        if said.is_count and len(args) == 1 and not clamped:
            return self._implicit_count(args[0], weight, alias, span)
        _check_arity(node, said, args, bool(clamped))
        lo = hi = None
        if clamped:
            c = clamped[0]
            lo, hi = _bounds(c.args["low"], c.args["high"], node)
            args = [a.this if isinstance(a, Clamped) else a for a in args]
        if lo is None and len(args) != len(said.arguments):
            raise _missing_bounds(node, Form.PAPER)
        if said.is_count:
            if lo is None:
                lo, hi = 0.0, _number(args[1], "the upper bound", node)
            if lo < 0 or hi < lo:
                raise InputError(
                    f"DPX-V022 `{node.sql(dialect=DPSQL)}`{where_text(node)}: count bounds need 0 <= L <= U. "
                    "Fix: e.g. ANON_COUNT(*, 5)."
                )
            return self._bounded_count(args[0], lo, hi, weight, alias, span)
        if lo is None:
            lo, hi = _bounds(args[-2], args[-1], node)
        p = said.p
        if said.takes_p:
            p = self._p(args[1] if len(args) > 1 else None, node)
        return DPAggregate(said.kind, args[0], lo, hi, said.clamp.value, p, weight, alias, span)

    @staticmethod
    def _bounded_count(arg, lo, hi, weight, alias, span) -> DPAggregate:
        star = isinstance(arg, exp.Star)
        kind = AggKind.COUNT_ROWS if star else AggKind.COUNT_VALUES
        return DPAggregate(kind, None if star else arg, lo, hi, "group", None, weight, alias, span)

    def _p(self, node, call) -> float:
        if node is None:
            raise InputError(
                f"DPX-V025 `{call.sql(dialect=DPSQL)}`{where_text(call)} needs a percentile p. "
                "Fix: e.g. ANON_NTILE(x, 0.5, 0, 100)."
            )
        p = _number(node, "the percentile p", call)
        if not 0 <= p <= 1:
            raise InputError(
                f"DPX-V025 percentile p = {p:g} in `{call.sql(dialect=DPSQL)}`{where_text(call)} is outside "
                "[0, 1]. Fix: use e.g. 0.5 for the median."
            )
        return p

    def _zeta(self, node: exp.Anonymous, said: Spelling, alias, span) -> DPAggregate:
        name = said.name
        positional, named = _split_named(node)
        if not positional:
            raise InputError(
                f"DPX-V020 `{node.sql(dialect=DPSQL)}`{where_text(node)} names no column. Fix: e.g. "
                f"{name}(x, ...) or COUNT(*, ...)."
            )
        weight = _weight(named, node)
        row_level = said.clamp is Clamp.ROW
        want = "contribution_bounds_per_row" if row_level else "contribution_bounds_per_group"
        wrong = "contribution_bounds_per_group" if row_level else "contribution_bounds_per_row"
        if wrong in named:
            raise InputError(
                f"DPX-V023 `{name}`{where_text(node)} does not accept {wrong}. Rule: "
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
            if said.is_count:
                return self._implicit_count(positional[0], weight, alias, span)
            raise _missing_bounds(node, Form.ZETA)
        pair = named[want]
        if not isinstance(pair, exp.Tuple) or len(pair.expressions) != 2:
            raise InputError(
                f"DPX-V022 {want} in `{node.sql(dialect=DPSQL)}` must be a pair (L, U). Fix: e.g. (0, 100)."
            )
        lo, hi = _bounds(pair.expressions[0], pair.expressions[1], node)
        if said.is_count:
            if lo < 0:
                raise InputError(
                    f"DPX-V022 `{node.sql(dialect=DPSQL)}`{where_text(node)}: count bounds need 0 <= L <= U. "
                    "Fix: e.g. contribution_bounds_per_group => (0, 5)."
                )
            return self._bounded_count(positional[0], lo, hi, weight, alias, span)
        p = said.p
        if said.takes_p:
            p = self._p(positional[1] if len(positional) > 1 else None, node)
        return DPAggregate(
            said.kind, positional[0], lo, hi, said.clamp.value, p, weight, alias, span
        )
