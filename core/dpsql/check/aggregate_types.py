"""Every DP aggregate's argument typed against the catalogue schema (issue 19 item 2).

SUM, AVG, VAR, STDDEV and the quantiles aggregate numbers; over text, booleans or dates they
would run on values DuckDB converts implicitly (or fails to), and release nonsense charged at
full price. Each aggregate kind states what its argument must be (`Aggregate.ARGUMENT`); the
argument expressions are typed with sqlglot's annotator over the same qualified relation as
the operand types (`core.dpsql.check.types`). Refused with DPX-V035 and a fix in the query's
own form, before any data is read.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types

from core.dpsql.aggregates.base import Argument
from core.dpsql.aggregates.kinds import KINDS
from core.dpsql.aggregates.linear import CountValues
from core.dpsql.catalog import Catalog
from core.dpsql.check.lineage import catalog_schema, qualified_copy
from core.dpsql.check.types import Family, family
from core.dpsql.parse.dialect import DPSQL
from core.dpsql.parse.ir import DPQuery
from core.errors import InputError


def argument_families(query: DPQuery, catalog: Catalog) -> list[Family | None]:
    """The type family of each aggregate's argument (None: the aggregate takes none)."""
    args = [(i, a.arg) for i, a in enumerate(query.aggregates) if a.arg is not None]
    out: list[Family | None] = [None] * len(query.aggregates)
    if not args:
        return out
    select = query.relation.copy()
    select.set("expressions", [exp.alias_(arg.copy(), f"__arg{i}") for i, arg in args])
    try:
        typed = annotate_types(
            qualified_copy(select, catalog), schema=catalog_schema(catalog), dialect="duckdb"
        )
        projections = typed.expressions
    except (SqlglotError, KeyError, ValueError, TypeError):
        projections = [None] * len(args)
    for (i, _), node in zip(args, projections, strict=True):
        inner = node.this if isinstance(node, exp.Alias) else node
        out[i] = Family.UNKNOWN if inner is None else family(inner)
    return out


def check_aggregate_types(query: DPQuery, catalog: Catalog) -> None:
    """V035: an aggregate that needs a number gets a number (or NULL); fail closed when the
    type cannot be inferred."""
    zeta = query.form == "DIFFERENTIAL_PRIVACY"
    for agg, fam in zip(query.aggregates, argument_families(query, catalog), strict=True):
        cls = KINDS[agg.kind]
        if cls.ARGUMENT is not Argument.NUMBER or fam in (Family.NUMBER, Family.NULL):
            continue
        x = agg.arg.sql(dialect=DPSQL)[:60]
        spelled = (cls.ZETA if zeta else cls.PAPER).replace("x", x, 1)
        count = (CountValues.ZETA if zeta else CountValues.PAPER).replace("x", x, 1)
        raise InputError(
            f"DPX-V035 `{agg.span.text}` aggregates `{x}`, which is {fam.value}, not a number. "
            f"Rule: {cls.KIND.value} needs a numeric argument (a text, boolean or date value "
            "would be converted implicitly and release nonsense). Fix: aggregate a numeric "
            f"column, e.g. {spelled.split('(', 1)[0]}(<numeric column>, ...); count the values "
            f"instead with {count}; or convert explicitly with TRY_CAST({x} AS DOUBLE) (NULL "
            "where it does not convert)."
        )
