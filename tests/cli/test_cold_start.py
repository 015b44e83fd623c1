"""Cold start: `dpx --help` and `dpx sql --help` import none of the heavy libraries (the
commands import them when they run); the subcommand list shown without importing the modules
says what the modules themselves register. No timing: what is imported is what costs."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

import pytest

from core.cli import SUBCOMMANDS, SUMMARIES, common_options

HEAVY = ("pandas", "numpy", "duckdb", "sqlglot", "pyarrow", "opendp", "pyspark")

PROBE = """
import contextlib, io, json, sys
from core.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as stop:  # argparse's --help and --version
        code = stop.code
print(json.dumps({"code": code, "help": out.getvalue(),
                  "heavy": [m for m in %r if m in sys.modules]}))
"""


def _probe(*argv: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,), *argv],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("argv", [("--help",), ("sql", "--help"), ("--version",), ("nosuch",)])
def test_help_imports_no_heavy_library(argv):
    out = _probe(*argv)
    assert out["heavy"] == [], out["heavy"]


def test_help_lists_every_subcommand():
    text = _probe("--help")["help"]
    for name in SUBCOMMANDS:
        assert name in text
    assert "--table NAME=FILE" in _probe("sql", "--help")["help"]


def test_the_summaries_are_what_the_modules_register():
    assert set(SUMMARIES) == set(SUBCOMMANDS)
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for module in dict.fromkeys(SUBCOMMANDS.values()):
        importlib.import_module(module).register(sub, common_options())
    registered = {action.dest: action.help for action in sub._choices_actions}
    assert registered == SUMMARIES


def test_the_parser_names_the_engines_dialects():
    from core.cli.sql import DIALECTS
    from core.dpsql.sql.expressions import DIALECTS as ENGINE_DIALECTS

    assert DIALECTS == ENGINE_DIALECTS


def test_sql_command_still_runs_after_a_light_parse(tmp_path):
    """The parser module is light; the command imports what it needs when it runs."""
    import pandas as pd

    path = tmp_path / "t.csv"
    pd.DataFrame({"uid": range(50), "d": ["a", "b"] * 25}).to_csv(path, index=False)
    q = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
        "max_groups_contributed = 1) d, ANON_COUNT(*, 5) AS c FROM t GROUP BY d"
    )
    out = _probe("sql", "--table", f"t={path}", "--uid", "uid", "--query", q, "--seed", "1",
                 "--registry", str(tmp_path / "reg"), "--json")  # fmt: skip
    assert out["code"] == 0 and "pandas" in out["heavy"]
    assert json.loads(out["help"])["epsilon_spent"] == 1
