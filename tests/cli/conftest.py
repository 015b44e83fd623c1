"""Shared by the CLI tests."""

import pytest

from core.cli import main


@pytest.fixture
def reg(tmp_path, monkeypatch):
    """An owner's registry directory in tmp_path, named by DPX_REGISTRY."""
    monkeypatch.setenv("DPX_MODE", "owner")
    where = tmp_path / "reg"
    monkeypatch.setenv("DPX_REGISTRY", str(where))
    return where


def run_dpx(capsys, monkeypatch, argv, role: str) -> tuple[int, str, str]:
    """`dpx ARGV` in `role` (DPX_MODE): the exit code, stdout and stderr."""
    monkeypatch.setenv("DPX_MODE", role)
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err
