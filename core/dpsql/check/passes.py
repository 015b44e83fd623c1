"""The checks of a DP query, as ONE ordered tuple of small named passes (sqlglot's optimizer
RULES are the model). `core.dpsql.service.prepare` parses the text, then runs `CHECKS` in order
on a `Checking` context; each pass either refuses (an `InputError` with a DPX rule code and a
fix) or records what later passes and the planner need (sources, lineage, the IR).

Every pass reads public things only — the query text and tree, the catalogue's schema, public
tables — never a private row, so any refusal here reads no data and charges nothing. Each pass
has its own fixture file of inputs and expected outcomes: tests/dpsql/checks/<pass name>.sql.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from core.dpsql.catalog import Catalog
from core.dpsql.check.aggregate_types import check_aggregate_types
from core.dpsql.check.allowlist import check_allowlist
from core.dpsql.check.amplification import Amplification, check_amplification
from core.dpsql.check.gate import gate
from core.dpsql.check.growth import WorkBound, check_growth
from core.dpsql.check.lineage import Lineage, catalog_schema, check_lineage
from core.dpsql.check.ranges import check_ranges
from core.dpsql.check.relations import (
    RelationChecker,
    Source,
    check_expression_subqueries,
    ctes_of,
    public_key_source,
)
from core.dpsql.check.scalar_subqueries import check_scalar_subqueries
from core.dpsql.check.size import check_reserved_names, check_tree
from core.dpsql.check.types import check_types
from core.dpsql.parse.ir import DPQuery
from core.dpsql.parse.normalize import normalize
from core.errors import InputError


@dataclass
class Checking:
    """What the checks know about one query; later passes read what earlier ones recorded."""

    text: str
    catalog: Catalog
    defaults: dict
    statements: list[exp.Expression]
    select: exp.Select | None = None  # the DP SELECT (statement_gate)
    relations: RelationChecker | None = None  # (relations)
    sources: list[Source] = field(default_factory=list)  # top-level FROM sources (relations)
    lineage: Lineage | None = None  # the qualified query's scopes (unit_lineage)
    amplification: Amplification | None = None  # the public work bound (amplification)
    work: WorkBound | None = None  # the largest value per row, characters/bytes (value_sizes)
    query: DPQuery | None = None  # the IR (query_form)
    public_source: Source | None = None  # PUBLIC_GROUPS' key table (public_groups)


Check = Callable[[Checking], None]


def statement_gate(c: Checking) -> None:
    """S001/S002: exactly one SELECT WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY; L001-L008:
    no syntax whose column lineage cannot be followed (relabelling, windows, sampling...)."""
    c.select = gate(c.statements)


def tree_size(c: Checking) -> None:
    """S005/S006: a tree small enough to analyse, CTE expansion bounded, no bind parameters."""
    check_tree(c.select)


def relations(c: Checking) -> None:
    """S003, V010-V016: registered tables only; Wilson's Table 4.3 on every FROM (by name)."""
    c.relations = RelationChecker(c.catalog, ctes_of(c.select, c.catalog))
    c.sources = c.relations.sources(c.select)


def expression_language(c: Checking) -> None:
    """A0xx: every node in the allowlist (nothing that can fail on some values), and scalar
    subqueries that provably return at most one row (A006)."""
    check_allowlist(c.select)
    check_scalar_subqueries(c.select)


def reads_private_table(c: Checking) -> None:
    """V014: a DP query must read a private table (else there is no unit to protect)."""
    if not any(s.private for s in c.sources):
        raise InputError(
            "DPX-V014 the query reads no private table, so there is no privacy unit to protect. "
            "Fix: query a private table (public tables can be joined to it)."
        )


def expression_subqueries(c: Checking) -> None:
    """V016: subqueries in WHERE, ON, the select list, GROUP BY or HAVING read public tables
    only."""
    check_expression_subqueries(c.select, c.relations)


def unit_lineage(c: Checking) -> None:
    """V010, V012, V028, L010, L021: the privacy unit followed by column identity."""
    uids = {s.alias: s.uid for s in c.sources if s.private and s.uid}
    c.lineage = check_lineage(c.select, c.catalog, uids)


def operand_types(c: Checking) -> None:
    """A010-A012: operands of one type family, so DuckDB never inserts a cast that can fail."""
    check_types(c.lineage.root.expression, catalog_schema(c.catalog))


def amplification(c: Checking) -> None:
    """V040: from public facts only (public tables' sizes and key multiplicities, the join
    shapes), at most MAX_AMPLIFICATION rows per private row through every join."""
    c.amplification = check_amplification(c.lineage, c.catalog)


def value_sizes(c: Checking) -> None:
    """V041: from the declared schema only (text widths, printed widths), every value the query
    computes is at most MAX_VALUE_CHARACTERS long; the largest bound is kept in `c.work`."""
    c.work = check_growth(c.lineage, c.catalog)


def query_form(c: Checking) -> None:
    """V020-V029, V033: the DP clause, its options and its aggregate calls, read into the IR."""
    # the unit under every name it carries here (a subquery may rename it, e.g. uid AS person)
    uid_names = c.catalog.uid_names() | {s.uid for s in c.sources if s.private and s.uid}
    c.query = normalize(c.select, uid_names, c.defaults, c.text)


def option_ranges(c: Checking) -> None:
    """V022, V025, V030-V033: every option and bound within its documented range."""
    check_ranges(c.query)


def aggregate_types(c: Checking) -> None:
    """V035: every DP aggregate's argument has the type its kind needs (numbers for SUM, AVG,
    VAR, STDDEV and quantiles), typed against the catalogue schema."""
    check_aggregate_types(c.query, c.catalog)


def reserved_names(c: Checking) -> None:
    """V034: output names may not use the engine's internal prefix."""
    check_reserved_names([o.name for o in c.query.outputs])


def public_groups(c: Checking) -> None:
    """V034: with PUBLIC_GROUPS, every key is a column of one public table."""
    if c.query.options.public_groups:
        c.public_source = public_key_source(c.query.keys, c.sources)


CHECKS: tuple[Check, ...] = (
    statement_gate,
    tree_size,
    relations,
    expression_language,
    reads_private_table,
    expression_subqueries,
    unit_lineage,
    operand_types,
    amplification,
    value_sizes,
    query_form,
    option_ranges,
    aggregate_types,
    reserved_names,
    public_groups,
)


def run_checks(c: Checking, upto: Check | None = None) -> Checking:
    """Run `CHECKS` in order (through `upto` when given: the fixture tests stop there)."""
    for check in CHECKS:
        check(c)
        if check is upto:
            break
    return c
