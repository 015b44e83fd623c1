"""The `dpx` entry point: version, datasets, exit codes and error reporting."""

import json

import pytest

from core import __version__
from core.cli import main


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"dpx {__version__}"


def test_datasets_json_lists_registered_demos(capsys):
    from core.data import all_demos

    assert main(["datasets", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in out["datasets"]] == [d.name for d in all_demos()]
    for d in out["datasets"]:
        assert d["licence"] and d["description"] and d["kind"] in {"points", "table", "sql"}


def test_usage_error_exits_2_with_one_line_and_no_traceback(capsys):
    assert main(["no-such-command"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpx: error:") and "invalid choice" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: dpx" in capsys.readouterr().out


def test_installed_console_script_runs():
    import subprocess
    import sys
    from pathlib import Path

    dpx = Path(sys.executable).parent / "dpx"
    assert dpx.exists(), "the dpx console script is not installed in this environment"
    result = subprocess.run(
        [str(dpx), "datasets", "--json"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "datasets" in json.loads(result.stdout)
