"""The statement gate: exactly one SELECT WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY.

Anything else (DDL, DML, PRAGMA, SET, ATTACH, COPY, INSTALL, several statements, set operations,
a plain SELECT) is refused before any other rule runs, and so is syntax whose column lineage
cannot be followed (`core.dpsql.check.lineage.refuse_untraceable`).
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.check.lineage import refuse_untraceable
from core.dpsql.parse.dialect import DPClause
from core.errors import InputError

FORBIDDEN_STATEMENTS = {
    "Create": "CREATE",
    "Insert": "INSERT",
    "Update": "UPDATE",
    "Delete": "DELETE",
    "Drop": "DROP",
    "Alter": "ALTER",
    "Pragma": "PRAGMA",
    "Set": "SET",
    "Attach": "ATTACH",
    "Detach": "DETACH",
    "Copy": "COPY",
    "Export": "EXPORT",
    "Install": "INSTALL",
    "Use": "USE",
    "Merge": "MERGE",
    "TruncateTable": "TRUNCATE",
    "Describe": "DESCRIBE",
    "Show": "SHOW",
    "Transaction": "BEGIN",
    "Commit": "COMMIT",
    "Rollback": "ROLLBACK",
    "Cache": "CACHE",
    "Summarize": "SUMMARIZE",
}


def gate(statements: list[exp.Expression]) -> exp.Select:
    """S001/S002: exactly one statement, a DP SELECT."""
    if len(statements) != 1:
        raise InputError(
            f"DPX-S001 {len(statements)} statements given. Rule: exactly one SELECT per query. "
            "Fix: remove the extra statements (and any ';' between them)."
        )
    stmt = statements[0]
    name = type(stmt).__name__
    if name in FORBIDDEN_STATEMENTS or isinstance(stmt, exp.Command):
        word = FORBIDDEN_STATEMENTS.get(name) or str(stmt.this).upper()
        raise InputError(
            f"DPX-S002 {word} statements are not allowed. Rule: only a single read-only SELECT "
            "WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY runs here. Fix: write a DP SELECT."
        )
    if not isinstance(stmt, exp.Select):
        raise InputError(
            f"DPX-S001 {name.upper()} is not a single SELECT. Rule: one DP SELECT statement "
            "(set operations such as UNION are not supported). Fix: write one SELECT WITH "
            "ANONYMIZATION query."
        )
    if not isinstance(stmt.args.get("hint"), DPClause):
        raise InputError(
            "DPX-S001 this is a plain SELECT. Rule: queries over private tables must be "
            "differentially private. Fix: write SELECT WITH ANONYMIZATION OPTIONS (...) or "
            "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (...)."
        )
    refuse_untraceable(stmt)  # before any other rule: relabelling syntax is never analysed
    return stmt
