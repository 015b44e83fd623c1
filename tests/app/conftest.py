"""AppTest factory: scripts are resolved from the repository root, not the test file."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app_test():
    """`app_test("pages/dp_sql.py")` -> an AppTest for that script (not yet run)."""

    def make(script: str, timeout: float = 60) -> AppTest:
        return AppTest.from_file(str(ROOT / script), default_timeout=timeout)

    return make


def register_staff(registry_dir, tmp_path, policy):
    """Register dataset 'staff' — the employee/orders demo tables written as CSV files, unit
    column `uid` — under `policy`; return the registry."""
    from core.dpsql.demos import DEMOS
    from core.registry import Registry

    tables = next(d for d in DEMOS if d.name == "sql-employee-orders").load()
    files = []
    for name, frame in tables.items():
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        files.append((name, path))
    registry = Registry(registry_dir)
    registry.add_dataset("staff", files, policy, uid="uid")
    return registry


def element_texts(node) -> list[str]:
    """Every element's protobuf text under `node` of an AppTest tree (what the browser would
    receive): where a test looks for a value that must never be shown."""
    out = []
    proto = getattr(node, "proto", None)
    if proto is not None:
        out.append(str(proto))
    for child in getattr(node, "children", {}).values():
        out.extend(element_texts(child))
    return out
