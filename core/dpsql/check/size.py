"""Size limits on the query text and its syntax tree, and reserved names (spec §4.1).

Every limit here depends only on the query text and its parsed tree, never on data, so a
refusal raised here reads no data and charges nothing.
"""

from __future__ import annotations

from sqlglot import exp

from core.dpsql.parse.ir import RESERVED_PREFIX
from core.errors import InputError

# Query text and tree. sqlglot's parser and generator recurse once per nesting level, so a
# deeply nested query would exhaust Python's stack (RecursionError); these bounds keep every
# accepted query far inside it. Real queries nest a few levels; 64 parentheses is generous.
MAX_TREE_DEPTH = 256
MAX_TREE_NODES = 50_000
# Table references after every CTE reference is replaced by its body. A chain of CTEs that
# each read the previous one twice doubles at every step, and both the analysis (which follows
# CTEs) and DuckDB's planner (which inlines them) would work for 2^n steps: a hang.
MAX_EXPANDED_TABLE_REFERENCES = 2_000


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
