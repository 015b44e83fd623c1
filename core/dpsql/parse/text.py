"""What the parser accepts: query text that is not empty, not too long and not nested too
deeply for sqlglot's recursive parser (checked on the text, before parsing)."""

from __future__ import annotations

from core.errors import InputError

MAX_QUERY_CHARS = 100_000
MAX_PAREN_DEPTH = 64


def paren_depth(sql: str) -> int:
    """The deepest nesting of parentheses outside string literals, quoted names and comments."""
    depth = deepest = 0
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":  # a literal or quoted name: skip to its closing quote ('' escapes)
            end = sql.find(c, i + 1)
            while end != -1 and end + 1 < n and sql[end + 1] == c:
                end = sql.find(c, end + 2)
            i = n if end == -1 else end + 1
            continue
        if sql.startswith("--", i):
            end = sql.find("\n", i)
            i = n if end == -1 else end + 1
            continue
        if sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            i = n if end == -1 else end + 2
            continue
        if c == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif c == ")":
            depth -= 1
        i += 1
    return deepest


def check_text(sql: str) -> None:
    """Refuse query text that is too long or nested too deeply to parse safely (no data read)."""
    if not isinstance(sql, str) or not sql.strip():
        raise InputError("DPX-S001 the query is empty. Fix: write a SELECT WITH ... query.")
    if len(sql) > MAX_QUERY_CHARS:
        raise InputError(
            f"DPX-S005 the query is {len(sql):,} characters long; at most "
            f"{MAX_QUERY_CHARS:,} are accepted. Fix: shorten it."
        )
    depth = paren_depth(sql)
    if depth > MAX_PAREN_DEPTH:
        raise InputError(
            f"DPX-S005 the query nests parentheses {depth} deep; at most {MAX_PAREN_DEPTH} "
            "levels are accepted. Fix: remove redundant parentheses or flatten subqueries."
        )
