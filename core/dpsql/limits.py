"""Resource limits of DP SQL: DuckDB threads, memory and a wall-clock timeout, and size limits
on the query text and its syntax tree (spec §4.1).

Every limit here depends only on public things (the query text, its parsed tree, the
configuration), never on data, so a refusal raised here reads no data and charges nothing.
The one exception is the *timeout* and *out-of-memory* during execution: they happen after the
data was read, so `service.run` keeps the charge and says so (see `ExecutionStopped`).
"""

from __future__ import annotations

import math
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlglot import exp

from core.errors import InputError

# Wall-clock limit of one query's execution in DuckDB (the CLI's `--timeout` default).
DEFAULT_TIMEOUT_S = 60.0
# A ceiling on the time limit itself (one day): a longer run is not an interactive query.
MAX_TIMEOUT_S = 86_400.0
# DuckDB threads: at most 4, never more than the machine has.
DEFAULT_THREADS = max(1, min(4, os.cpu_count() or 1))


def _half_of_memory() -> str:
    """Half of the machine's physical memory (4 GB where it cannot be read)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "4GB"
    return f"{max(256, total // 2 // 2**20)}MB"


# DuckDB memory limit; DuckDB raises OutOfMemoryException beyond it instead of swapping the
# machine to a halt. Half of physical memory leaves room for Python and the rest of the app.
DEFAULT_MEMORY_LIMIT = _half_of_memory()

# Query text and tree. sqlglot's parser and generator recurse once per nesting level, so a
# deeply nested query would exhaust Python's stack (RecursionError); these bounds keep every
# accepted query far inside it. Real queries nest a few levels; 64 parentheses is generous.
MAX_QUERY_CHARS = 100_000
MAX_PAREN_DEPTH = 64
MAX_TREE_DEPTH = 256
MAX_TREE_NODES = 50_000
# Table references after every CTE reference is replaced by its body. A chain of CTEs that
# each read the previous one twice doubles at every step, and both the analysis (which follows
# CTEs) and DuckDB's planner (which inlines them) would work for 2^n steps: a hang.
MAX_EXPANDED_TABLE_REFERENCES = 2_000

# Internal column names of the released table start with this prefix; user names may not.
RESERVED_PREFIX = "__dpx_"
ROW_ID = f"{RESERVED_PREFIX}row"  # released-table column that keeps rows and intervals aligned


@dataclass(frozen=True)
class ResourceLimits:
    """What one DuckDB sandbox may use: threads, memory (DuckDB syntax, e.g. "4GB") and the
    wall-clock seconds one query may run before the connection is interrupted."""

    threads: int = DEFAULT_THREADS
    memory_limit: str = DEFAULT_MEMORY_LIMIT
    timeout_s: float = DEFAULT_TIMEOUT_S

    def __post_init__(self):
        check_timeout(self.timeout_s)
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise InputError(
                f"DPX-S008 threads must be an integer >= 1, got {self.threads}. Fix: e.g. 4."
            )
        text = str(self.memory_limit).strip().upper()
        number = text.rstrip("KMGTIB")
        if not number or not number.replace(".", "", 1).isdigit() or float(number) <= 0:
            raise InputError(
                f"DPX-S008 memory_limit must look like '512MB' or '4GB', got {self.memory_limit!r}. "
                "Fix: e.g. '4GB'."
            )


def check_timeout(seconds: float) -> float:
    """A time limit must be a finite number of seconds in (0, MAX_TIMEOUT_S]."""
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or not 0 < seconds <= MAX_TIMEOUT_S
    ):
        raise InputError(
            f"DPX-S008 the time limit must be a number of seconds in (0, {MAX_TIMEOUT_S:g}], "
            f"got {seconds}. Fix: e.g. --timeout 60."
        )
    return float(seconds)


DEFAULT_LIMITS = ResourceLimits()


class ExecutionStopped(InputError):
    """DuckDB stopped a query after it had started reading data (timeout, out of memory)."""


class AnalysisTimeout(BaseException):  # noqa: N818 - BaseException: no `except Exception` swallows it
    """Parsing and validating a query (no data read) took longer than the time limit."""


@contextmanager
def analysis_deadline(seconds: float) -> Iterator[None]:
    """Raise `AnalysisTimeout` if the block (pure-Python analysis, no data) runs past `seconds`.

    Uses SIGALRM, so it only arms in the main thread of a POSIX process (the CLI); elsewhere it
    does nothing and the structural limits of `check_text` / `check_tree` bound the work."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return

    def on_alarm(signum, frame):
        raise AnalysisTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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


def tree_depth(tree: exp.Expression) -> tuple[int, int]:
    """(depth, node count) of a sqlglot tree, computed without recursion."""
    deepest = count = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        count += 1
        deepest = max(deepest, depth)
        for child in node.iter_expressions():
            stack.append((child, depth + 1))
    return deepest, count


def _ctes_children_first(tree: exp.Expression) -> list[exp.CTE]:
    """Every CTE, nested ones before the CTE holding them and siblings in written order."""
    out: list[exp.CTE] = []
    stack: list[tuple[exp.Expression, bool]] = [(tree, False)]
    while stack:
        node, visited = stack.pop()
        if visited:
            if isinstance(node, exp.CTE):
                out.append(node)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(node.iter_expressions())))
    return out


def expanded_table_references(tree: exp.Expression) -> int:
    """An upper bound on the table references of `tree` with every CTE reference replaced
    by the CTE's body (computed in one pass, without expanding anything)."""
    cap = MAX_EXPANDED_TABLE_REFERENCES + 1
    weight: dict[str, int] = {}

    def size(body: exp.Expression, own: str | None) -> int:
        total = 0
        for table in body.find_all(exp.Table):
            name = table.name.lower()
            total += 1 if name == own else weight.get(name, 1)
            if total >= cap:
                return cap
        return total

    for cte in _ctes_children_first(tree):
        own = cte.alias_or_name.lower()
        weight[own] = max(weight.get(own, 0), size(cte.this, own))
    return size(tree, None)


def check_tree(tree: exp.Expression) -> None:
    """Refuse a parsed query whose tree is too deep or too large, and bind parameters
    (`?`, `$1`, `:name`): a DP query is complete text, nothing is bound at run time."""
    depth, count = tree_depth(tree)
    if depth > MAX_TREE_DEPTH or count > MAX_TREE_NODES:
        raise InputError(
            f"DPX-S005 the query is too complex (tree depth {depth}, {count} nodes; limits "
            f"{MAX_TREE_DEPTH} and {MAX_TREE_NODES}). Fix: simplify long chains of operators."
        )
    expanded = expanded_table_references(tree)
    if expanded > MAX_EXPANDED_TABLE_REFERENCES:
        raise InputError(
            f"DPX-S005 the query reads more than {MAX_EXPANDED_TABLE_REFERENCES:,} tables once "
            "every WITH (CTE) reference is expanded (CTEs that read earlier CTEs several times "
            "multiply). Fix: reference each CTE fewer times or simplify the chain."
        )
    for node in tree.find_all(exp.Placeholder, exp.Parameter):
        raise InputError(
            f"DPX-S006 `{node.sql()}` is a bind parameter; DP queries take no parameters. "
            "Fix: write the value as a literal."
        )


def check_reserved_names(names: list[str]) -> None:
    """Output and key names may not use the engine's internal prefix."""
    for name in names:
        if str(name).lower().startswith(RESERVED_PREFIX):
            raise InputError(
                f"DPX-V034 the output name `{name}` starts with `{RESERVED_PREFIX}`, which is "
                "reserved for the engine's internal columns. Fix: choose another alias."
            )
