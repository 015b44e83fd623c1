"""The layers of ARCHITECTURE.md, enforced: `core` never imports streamlit; every module imports
only from its own layer or those above it; and no import cycle exists anywhere.

    errors → privacy → data, registry → spatial, balancing, dpsql → governance, reports, viz
           → cli, ui → pages, app
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# package prefix -> layer (lower = above in the list = may be imported by higher layers)
LAYERS: dict[str, int] = {
    "core": 0,  # core/__init__.py: the version
    "core.errors": 0,
    "core.privacy": 1,
    "core.data": 2,
    "core.registry": 2,
    "core.sparkutil": 2,
    "core.spatial": 3,
    "core.balancing": 3,
    "core.dpsql": 3,
    "core.governance": 4,
    "core.planning": 4,
    "core.reports": 4,
    "core.viz": 4,
    "core.cli": 5,
    "ui": 5,
    "pages": 6,
    "app": 6,
}


def layer_of(module: str) -> int:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        prefix = ".".join(parts[:i])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def modules() -> dict[str, Path]:
    found = {"app": ROOT / "app.py"}
    for top in ("core", "ui", "pages"):
        for path in (ROOT / top).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `name` imports (relative imports resolved, submodules mapped to the
    nearest known module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def test_no_core_module_imports_streamlit():
    offenders = []
    for path in (ROOT / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path}:{node.lineno}" for n in names if n.split(".")[0] == "streamlit"]
    assert offenders == []


def test_no_module_imports_from_a_lower_layer():
    upward = [
        f"{m} (layer {layer_of(m)}) imports {t} (layer {layer_of(t)})"
        for m, targets in graph().items()
        for t in sorted(targets)
        if layer_of(t) > layer_of(m)
    ]
    assert upward == []


def test_no_import_cycles():
    g = graph()
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in g:
        if v not in index:
            visit(v)
    assert cycles == []


def test_the_layer_table_itself_catches_an_upward_import(tmp_path):
    """Positive control: a registry module importing a tool is reported."""
    fake = tmp_path / "x.py"
    fake.write_text("from core.spatial.grid import Grid\n")
    known = {**modules(), "core.registry.x": fake}
    targets = imports_of("core.registry.x", fake, known)
    assert "core.spatial.grid" in targets and layer_of("core.spatial.grid") > layer_of(
        "core.registry.x"
    )
