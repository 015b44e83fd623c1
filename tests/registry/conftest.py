"""Shared by the registry tests: a two-row table file and a registry in the test's directory."""

from pathlib import Path

import pytest

from core.registry import Registry


@pytest.fixture
def table(tmp_path) -> Path:
    path = tmp_path / "t.csv"
    path.write_text("uid,x\n1,2\n2,3\n")
    return path


@pytest.fixture
def reg(registry_dir) -> Registry:
    return Registry(registry_dir)
