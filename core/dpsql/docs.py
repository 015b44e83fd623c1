"""The DP SQL reference tables of the documentation page docs/dpsql-rules.md, generated from the
modules that enforce them.

    .venv/bin/python -m core.dpsql.docs > /tmp/dpsql_reference.md

and paste the tables into docs/dpsql-rules.md (`tests/dpsql/test_docs_readme.py` fails while the
page's machine-independent tables differ from this output).

Prints markdown: the rule codes (RULE_CODES below; a test checks that every code raised in
`core/dpsql` is listed and every listed code is raised), the expression allowlist
(`check.allowlist.ALLOWLIST`, the one table of what may be evaluated over the query's rows),
the check passes in order (`check.passes.CHECKS`), the resource limits (`limits`, and the size
limits of `parse.text` and `check.size`) and the option ranges (`check.ranges`).
"""

from __future__ import annotations

from collections import defaultdict

from core.dpsql import limits
from core.dpsql.check import ranges as options
from core.dpsql.check import size
from core.dpsql.check.allowlist import ALLOWLIST, Totality
from core.dpsql.check.amplification import JOIN_ROWS_PER_UNIT, MAX_AMPLIFICATION
from core.dpsql.check.growth import MAX_VALUE_CHARACTERS
from core.dpsql.check.lineage import RULES as LINEAGE_RULES
from core.dpsql.check.passes import CHECKS
from core.dpsql.execute.pool import POOL
from core.dpsql.parse import text

RULE_CODES: dict[str, str] = {
    "DPX-P001": "syntax error (line, column, a hint for known patterns)",
    "DPX-S001": "not exactly one SELECT statement",
    "DPX-S002": "a forbidden statement or command (named), also nested",
    "DPX-S003": "no FROM, an unknown table, a table function, a file path or a schema-qualified name",
    "DPX-S005": "a size limit: text length, parenthesis depth, tree depth/nodes, expanded table references",
    "DPX-S006": "a bind parameter (`?`, `$1`)",
    "DPX-S007": "analysing the query took longer than the time limit",
    "DPX-S008": "a resource setting out of range (time limit, threads, memory limit)",
    "DPX-S009": "a `--timeout` too short to read the tables (refused before charging)",
    "DPX-S010": "`--spill-dir` names a directory that cannot be used (refused before charging)",
    "DPX-A001": "a node, operator or function outside the expression allowlist",
    "DPX-A002": "a LIKE/ILIKE pattern or ESCAPE that is not a valid string literal",
    "DPX-A003": "a subquery as an operand of arithmetic or a function",
    "DPX-A004": "// or % of an aggregate",
    "DPX-A005": "a function that can raise applied to an aggregate in a subquery",
    "DPX-A006": "a scalar subquery that may return more than one row (needs LIMIT 1 or an "
    "aggregate without GROUP BY)",
    "DPX-A010": "operands of different type families (DuckDB would cast implicitly)",
    "DPX-A011": "a non-boolean condition (WHERE, ON, HAVING, CASE WHEN, AND/OR/NOT, IS TRUE)",
    "DPX-A012": "a text literal meeting a date/time value that does not convert to it",
    **LINEAGE_RULES,
    "DPX-V011": "a CROSS or comma join of private relations",
    "DPX-V013": "a private subquery that does not output the unit (or `*` over a join)",
    "DPX-V014": "an ambiguous unit column, no private table read, or a wrong privacy_unit_column",
    "DPX-V016": "an operator not allowed over private rows (set operations, PIVOT, LIMIT, DISTINCT ON "
    "without the unit, UNNEST/LATERAL, expression subqueries, nested or recursive CTEs)",
    "DPX-V020": "a plain (non-DP) aggregate in the DP SELECT, or no DP aggregate",
    "DPX-V021": "a DP aggregate other than COUNT without contribution bounds, or with extra "
    "positional arguments",
    "DPX-V022": "bounds not numeric literals, L > U, or abs(bound) > 1e15",
    "DPX-V023": "the wrong bounds kind (per row vs per group)",
    "DPX-V024": "COUNT(DISTINCT col) with col not the unit",
    "DPX-V025": "a percentile p missing or outside [0, 1]",
    "DPX-V026": "a DP aggregate nested, in WHERE or in GROUP BY",
    "DPX-V027": "a select item neither key nor aggregate; unsupported clauses (GROUP BY ALL, OFFSET)",
    "DPX-V029": "ANON_* and ZetaSQL spellings mixed with the other form",
    "DPX-V030": "epsilon missing, not finite or below its floor",
    "DPX-V031": "delta missing, outside [floor, 1), or 0 with thresholding",
    "DPX-V032": "max_groups_contributed missing or outside its range",
    "DPX-V033": "an unknown, repeated or out-of-range option or weight; too many aggregates",
    "DPX-V034": "PUBLIC_GROUPS keys not from one public table; a reserved output name",
    "DPX-V035": "a numeric DP aggregate (SUM, AVG, VAR, STDDEV, quantiles) over a text, boolean or "
    "date value",
    "DPX-V040": "one private row could produce more rows through the joins than the public bound "
    "allows (ON TRUE / non-equi / OR joins, duplicated keys, private joins; CTEs and subqueries "
    "included)",
    "DPX-V041": "a value the query computes could be longer than the public per-value bound "
    "(REPLACE / concatenation growth), bounded from the declared text widths",
    "DPX-B001": "the dataset's budget would be exceeded (nothing charged)",
    "DPX-B002": "the query's epsilon or delta is above a per-query cap (nothing charged)",
    "DPX-E001": "the engine (DuckDB or Spark) refused the generated query or a table before reading data (nothing charged)",
    "DPX-E002": "HAVING / ORDER BY / LIMIT failed on the released rows (post-processing)",
    "DPX-E003": "the time limit stopped the query after data was read (the charge stands)",
    "DPX-E004": "the query failed while reading data (message withheld; the charge stands)",
    "DPX-E005": "the memory limit stopped the query (the charge stands)",
    "DPX-E009": "an internal error, masked (details could depend on private data)",
    # settings given outside the query: CLI flags, table registration, the page's builder
    "DPX-C001": "a `--table` / `--public` argument that is not NAME=FILE",
    "DPX-C003": "a `--budget-epsilon` that is not a finite number >= 0",
    "DPX-C004": "no private `--table`",
    "DPX-C005": "a `--query-file` that cannot be read or is not UTF-8 text",
    "DPX-C006": "an output file that cannot be written (nothing partial is left)",
    "DPX-C010": "a private table registered without a privacy unit (`--uid COL` or `--row-is-unit`)",
    "DPX-C011": "a `--uid` column the table does not have",
    "DPX-C012": "`--row-is-unit` on a table that already has a `row_id` column",
    "DPX-C013": "both `--uid` and `--row-is-unit`",
    "DPX-C014": "a table name that is not a plain identifier",
    "DPX-C015": "a registered table whose columns no longer match its declared schema",
    "DPX-C016": "an analyst's query on a dataset registered before schemas were declared",
    "DPX-C020": "the query builder has no aggregate",
    "DPX-C021": "a query-builder aggregate without a column",
}


def rule_table() -> str:
    rows = ["| Code | Refused |", "|---|---|"]
    rows += [f"| `{code}` | {text} |" for code, text in sorted(RULE_CODES.items())]
    return "\n".join(rows)


def allowlist_table() -> str:
    """One row per totality class: the node types in it, what it accepts and why it is total."""
    groups: dict[Totality, list[str]] = defaultdict(list)
    for node_type, entry in ALLOWLIST.items():
        groups[entry.totality].append(node_type.__name__)
    rows = [
        "| Class | Why it cannot make a query fail on one unit's data | Node types |",
        "|---|---|---|",
    ]
    for totality in Totality:
        names = ", ".join(f"`{n}`" for n in sorted(groups.get(totality, [])))
        rows.append(f"| {totality.name} | {totality.value} | {names} |")
    return "\n".join(rows)


def limits_table() -> str:
    rows = [
        (
            "Wall-clock time limit",
            f"{limits.DEFAULT_TIMEOUT_S:g} s, `dpx sql`: scaled up with the tables' file size "
            f"before the charge (CLI `--timeout`, at most {limits.MAX_TIMEOUT_S:g} s)",
        ),
        ("DuckDB threads", f"{limits.DEFAULT_THREADS} on this machine (min(4, CPUs))"),
        ("DuckDB memory_limit", f"{limits.DEFAULT_MEMORY_LIMIT} on this machine (half of RAM)"),
        ("Query text", f"{text.MAX_QUERY_CHARS:,} characters"),
        ("Parenthesis depth", f"{text.MAX_PAREN_DEPTH}"),
        ("Syntax tree", f"depth {size.MAX_TREE_DEPTH}, {size.MAX_TREE_NODES:,} nodes"),
        ("Table references after CTE expansion", f"{size.MAX_EXPANDED_TABLE_REFERENCES:,}"),
        ("DP aggregates per query", f"{options.MAX_AGGREGATES}"),
        (
            "Concurrent executions per process (`DPX_SQL_SLOTS`)",
            f"{POOL.slots} on this machine; the rest wait in a first-come queue",
        ),
        (
            "DuckDB memory per execution (`DPX_SQL_MEMORY` / slots)",
            f"{POOL.memory_per_slot} on this machine (the page's engines)",
        ),
        ("Rows one private row may produce through joins", f"{MAX_AMPLIFICATION:,} (DPX-V040)"),
        (
            "Characters of one computed value (bounded from declared widths)",
            f"{MAX_VALUE_CHARACTERS:,} (DPX-V041)",
        ),
        ("Rows per unit of private tables joined to each other", f"{JOIN_ROWS_PER_UNIT}"),
    ]
    return "\n".join(
        ["| Limit | Default / ceiling |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows]
    )


def options_table() -> str:
    rows = [
        ("epsilon", f"finite, ≥ {options.EPSILON_MIN:g}"),
        ("delta", f"[{options.DELTA_MIN:g}, 1); 0 only with PUBLIC_GROUPS"),
        ("max_groups_contributed", f"integer in [1, {options.MAX_GROUPS:,}]"),
        ("max_rows_per_group", f"integer in [1, {options.MAX_ROWS_PER_GROUP:,}] (default 5)"),
        ("quantile_grid_size", f"integer in [2, {options.MAX_QUANTILE_GRID:,}] (default 1001)"),
        ("min_privacy_units_per_group", f"integer in [1, {options.MAX_MIN_UNITS:,}] (default off)"),
        (
            "threshold_weight, weight =>",
            f"[{options.WEIGHT_MIN:g}, {options.WEIGHT_MAX:g}] (default 1)",
        ),
        (
            "contribution bounds L, U",
            f"numeric literals, L ≤ U, abs(bound) ≤ {options.MAX_ABS_BOUND:g}",
        ),
    ]
    return "\n".join(
        ["| Option | Accepted range |", "|---|---|"] + [f"| `{a}` | {b} |" for a, b in rows]
    )


def checks_table() -> str:
    """The check passes in the order `prepare` runs them (`core/dpsql/check/passes.py`)."""
    rows = ["| # | Pass | What it refuses |", "|---|---|---|"]
    for i, check in enumerate(CHECKS, 1):
        doc = " ".join((check.__doc__ or "").split())
        rows.append(f"| {i} | `{check.__name__}` | {doc} |")
    return "\n".join(rows)


def main() -> None:
    print("### Rule codes\n")
    print(rule_table())
    print("\n### Checks, in the order they run (`core/dpsql/check/passes.py`: `CHECKS`)\n")
    print(checks_table())
    print("\n### Expression allowlist (`core/dpsql/check/allowlist.py`: `ALLOWLIST`)\n")
    print(allowlist_table())
    print("\n### Resource limits\n")
    print(limits_table())
    print("\n### Option ranges\n")
    print(options_table())


if __name__ == "__main__":
    main()
