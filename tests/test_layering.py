"""Rule 1 of the house: `core` never imports streamlit."""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"


def test_no_core_module_imports_streamlit():
    offenders = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path}:{node.lineno}" for n in names if n.split(".")[0] == "streamlit"]
    assert offenders == []
