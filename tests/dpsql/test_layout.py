"""Issue 19 item 4: `core/dpsql` reads as the pipeline it runs — stage subpackages, one class
per aggregate kind, no string comparisons on the kind, no re-export stubs, no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

from core.dpsql.aggregates.base import Aggregate
from core.dpsql.aggregates.kinds import KINDS
from core.dpsql.check.passes import CHECKS
from core.dpsql.parse.ir import AggKind

DPSQL = Path(__file__).resolve().parents[2] / "core" / "dpsql"
STAGES = ("parse", "check", "plan", "aggregates", "sql", "execute", "release")


def _module(path: Path) -> str:
    parts = path.relative_to(DPSQL.parents[1]).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every core.dpsql module `path` imports, anywhere in the file (TYPE_CHECKING included)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.module.startswith("core.dpsql")
        ):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                is_module = (DPSQL.parents[1] / (sub.replace(".", "/") + ".py")).exists()
                out.add(sub if is_module else node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("core.dpsql")}
    return out


def test_no_import_cycle_inside_core_dpsql():
    graph = {_module(p): _imports(p) for p in DPSQL.rglob("*.py")}
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*stack, node, nxt]))
            if nxt not in state:
                visit(nxt, [*stack, node])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [])


def test_the_stages_are_subpackages_and_the_old_flat_modules_are_gone():
    for stage in STAGES:
        assert (DPSQL / stage / "__init__.py").is_file(), stage
    old = ["rewrite", "validate", "normalize", "planning", "mechanisms", "budget_split",
           "release", "engine", "allowlist", "lineage", "typecheck", "quantile", "threshold",
           "caps", "gate", "aggregates", "option_reader", "options", "dialect", "ir"]  # fmt: skip
    assert [m for m in old if (DPSQL / f"{m}.py").exists()] == []


def test_one_class_per_aggregate_kind():
    assert set(KINDS) == set(AggKind)
    for kind, cls in KINDS.items():
        assert issubclass(cls, Aggregate) and cls.KIND is kind


def test_no_string_comparison_on_a_kind():
    """`x.kind == "SUM"` or `x.kind in ("VAR", ...)` anywhere in core/dpsql is refused."""

    def is_kind(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr in ("kind", "KIND")

    def is_text(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(is_text(e) for e in node.elts)
        return False

    found = []
    for path in DPSQL.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(is_kind(s) for s in sides) and any(is_text(s) for s in sides):
                    found.append(f"{path.relative_to(DPSQL)}:{node.lineno}")
    assert found == []


def test_every_check_pass_has_a_fixture_file():
    fixtures = Path(__file__).parent / "checks"
    assert sorted(p.stem for p in fixtures.glob("*.sql")) == sorted(c.__name__ for c in CHECKS)
