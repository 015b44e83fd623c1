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


# -- no loose parameter dict crosses a layer (issue 28) ------------------------------------------
# A function (or a dataclass field, a constructor's parameter) named `params` or `*_params`
# annotated as a dict is a loose bag of parameters passed between layers: a tool's request is a
# typed, frozen object instead (`LocationParams`, `LocationBuildRequest`, `HTFOptions`, ...).
# Allowed where the dict is the stored record itself, each with its reason:
PARAMS_DICT_ALLOWED = {
    "core/registry/": "the registry stores a run's params as JSON: the record is a dict at the "
    "storage boundary (`Release.params`, `Registry.charge`/`refuse`)",
    "core/governance/flow.py": "a governed request carries the record the registry stores "
    "(`Request.params`), built by each tool's `*_request` from its typed params and its "
    "`Origin` (`core.governance.origin`)",
    "core/spatial/release.py": "`Release.params`: the builder's own recorded parameters (each "
    "builder its own keys), written into the artefact; typing them touches every builder",
}
_DICT_NAMES = {"dict", "Dict", "Mapping", "MutableMapping"}


def _is_dict(annotation: ast.expr | None) -> bool:
    """`dict`, `dict[...]`, `Mapping[...]`, `X | None` of one of them, or their text."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return _is_dict(ast.parse(annotation.value, mode="eval").body)
    if isinstance(annotation, ast.BinOp):  # X | Y
        return _is_dict(annotation.left) or _is_dict(annotation.right)
    if isinstance(annotation, ast.Subscript):
        return _is_dict(annotation.value)
    if isinstance(annotation, ast.Attribute):
        return annotation.attr in _DICT_NAMES
    return isinstance(annotation, ast.Name) and annotation.id in _DICT_NAMES


def _is_params_name(name: str) -> bool:
    return name == "params" or name.endswith("_params")


def params_dicts(root: Path = ROOT) -> list[str]:
    """Every `params: dict` parameter or dataclass field under core/, ui/, pages/ of `root`
    (path:line name), outside the allowed places."""
    found = []
    for top in ("core", "ui", "pages"):
        for path in sorted((root / top).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if any(rel.startswith(prefix) for prefix in PARAMS_DICT_ALLOWED):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    a = node.args
                    args = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
                    found += [
                        f"{rel}:{arg.lineno} {node.name}({arg.arg})"
                        for arg in args
                        if arg is not None and _is_params_name(arg.arg) and _is_dict(arg.annotation)
                    ]
                elif isinstance(node, ast.ClassDef):
                    found += [
                        f"{rel}:{s.lineno} {node.name}.{s.target.id}"
                        for s in node.body
                        if isinstance(s, ast.AnnAssign)
                        and isinstance(s.target, ast.Name)
                        and _is_params_name(s.target.id)
                        and _is_dict(s.annotation)
                    ]
    return found


def test_no_params_dict_crosses_a_layer():
    assert params_dicts() == []


def test_the_params_rule_catches_a_loose_dict(tmp_path):
    """Positive control: a page helper taking `params: dict`, a ui function taking
    `method_params: Mapping | None` and a dataclass field `params: dict[str, int]` are reported;
    the same names typed otherwise are not."""
    (tmp_path / "pages").mkdir()
    (tmp_path / "ui").mkdir()
    (tmp_path / "core").mkdir()
    (tmp_path / "pages" / "p.py").write_text(
        "def show(x, params: dict) -> None: ...\ndef ok(params: 'Request') -> None: ...\n"
    )
    (tmp_path / "ui" / "u.py").write_text(
        "from collections.abc import Mapping\n"
        "def run(*, method_params: 'Mapping[str, dict] | None' = None): ...\n"
    )
    (tmp_path / "core" / "c.py").write_text(
        "from dataclasses import dataclass\n@dataclass\nclass Build:\n    params: dict[str, int]\n"
        "    options: dict\n"
    )
    assert params_dicts(tmp_path) == [
        "core/c.py:4 Build.params",
        "ui/u.py:2 run(method_params)",
        "pages/p.py:1 show(params)",
    ]
