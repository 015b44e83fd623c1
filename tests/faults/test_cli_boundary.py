"""The CLI's error boundary (core/cli.py `main`, issue 17): never a traceback. SQLite and OS
errors that escape a tool become one line and exit 2; any other exception is one generic
"internal error" line (exit 2) unless DPX_DEBUG=1, which re-raises it for tests and developers."""

from __future__ import annotations

import errno
import json
import signal
import sqlite3
import time

import pytest

import core.cli as cli
from core.errors import InputError
from tests.faults.conftest import assert_one_error_line, dpx_command, temporaries


def _with_handler(monkeypatch, handler) -> None:
    """Make `dpx x` run `handler(args)`."""

    def build_parser(argv=None):
        parser = cli._Parser(prog="dpx")
        sub = parser.add_subparsers(dest="command", parser_class=cli._Parser)
        x = sub.add_parser("x", parents=[cli.common_options()])
        x.set_defaults(handler=handler)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)


def _raiser(exc: BaseException):
    def handler(args):
        raise exc

    return handler


@pytest.mark.parametrize(
    ("exc", "needle"),
    [
        (sqlite3.DatabaseError("database disk image is malformed"), "damaged"),
        (sqlite3.OperationalError("database or disk is full"), "is full"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "cannot be written"),
        (sqlite3.OperationalError("database is locked"), "locked"),
        (OSError(errno.ENOSPC, "No space left on device", "/x/out.csv"), "No space left"),
        (OSError(errno.EACCES, "Permission denied", "/x/out.csv"), "Permission denied"),
        (OSError(errno.ENAMETOOLONG, "File name too long", "/x/" + "n" * 400), "too long"),
        (IsADirectoryError(errno.EISDIR, "Is a directory", "/x"), "Is a directory"),
        (FileNotFoundError(errno.ENOENT, "No such file", "/x/in.csv"), "file not found"),
        (InputError("line one\nline two"), "line one line two"),
        (KeyboardInterrupt(), "interrupted"),
    ],
)
def test_escaping_errors_become_one_line(monkeypatch, capsys, exc, needle):
    _with_handler(monkeypatch, _raiser(exc))
    code = cli.main(["x"])
    out = capsys.readouterr()
    assert code == (130 if isinstance(exc, KeyboardInterrupt) else 2)
    assert_one_error_line(out.err, repr(exc))
    assert needle in out.err and out.out == ""


def test_an_internal_error_is_one_generic_line_without_debug(monkeypatch, capsys):
    monkeypatch.delenv("DPX_DEBUG", raising=False)
    _with_handler(monkeypatch, _raiser(ZeroDivisionError("secret value 42")))
    assert cli.main(["x"]) == 2
    err = capsys.readouterr().err
    assert_one_error_line(err, "internal error")
    assert "internal error (ZeroDivisionError)" in err and "42" not in err


def test_debug_mode_re_raises_programming_errors(monkeypatch):
    monkeypatch.setenv("DPX_DEBUG", "1")
    _with_handler(monkeypatch, _raiser(ZeroDivisionError("x")))
    with pytest.raises(ZeroDivisionError):
        cli.main(["x"])


def test_json_output_is_printed_whole_or_not_at_all(monkeypatch, capsys):
    monkeypatch.delenv("DPX_DEBUG", raising=False)
    _with_handler(monkeypatch, lambda args: {"ok": 1, "bad": float("nan")})
    assert cli.main(["x", "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == ""  # not 250 bytes of JSON and then a failure
    assert_one_error_line(out.err, "nan in json")
    _with_handler(monkeypatch, lambda args: {"ok": 1})
    assert cli.main(["x", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"ok": 1}


def test_sigterm_while_publishing_removes_temporaries_and_leaves_nothing_partial(tmp_path):
    """SIGTERM (unlike SIGKILL) lets the writer clean up at once: no temporary, no partial."""
    import subprocess

    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(3)
    n = 200_000
    table = tmp_path / "t.csv"
    pd.DataFrame({"sa": rng.choice(list("abcd"), n, p=[0.4, 0.3, 0.2, 0.1]),
                  "note": ["padding text for longer rows"] * n}).to_csv(table, index=False)  # fmt: skip
    outdir = tmp_path / "out"
    outdir.mkdir()
    terminated = 0
    for attempt in range(3):
        child = subprocess.Popen(
            dpx_command(
                "balance",
                str(table),
                "--sa",
                "sa",
                "--rho1",
                "1/3",
                "--rho2",
                "2/3",
                "--perturb",
                "--out",
                str(outdir / "p.csv"),
                "--registry",
                str(tmp_path / "reg"),
            ),  # fmt: skip
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        while child.poll() is None and not temporaries(outdir):
            time.sleep(0.0005)
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=600)
        assert temporaries(outdir) == [], attempt
        if child.returncode == 143:
            terminated += 1
            assert_one_error_line(err, "SIGTERM")
            assert not (outdir / "p.csv").exists() and not (outdir / "p.metadata.json").exists()
        else:
            assert child.returncode == 0, err
            assert len(pd.read_csv(outdir / "p.csv")) == n
            (outdir / "p.csv").unlink()
            (outdir / "p.metadata.json").unlink()
    assert terminated >= 1
