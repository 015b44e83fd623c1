"""Shared by the CLI tests."""

from core.cli import main


def run_dpx(capsys, monkeypatch, argv, role: str) -> tuple[int, str, str]:
    """`dpx ARGV` in `role` (DPX_MODE): the exit code, stdout and stderr."""
    monkeypatch.setenv("DPX_MODE", role)
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err
