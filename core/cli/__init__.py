"""`dpx`: the command-line face of DP Explorer.

Subcommands are registered lazily: `SUBCOMMANDS` maps each subcommand name to the module that
provides `register(subparsers, common)`. Adding one is a one-line entry in that mapping
(a module may register several names; list each of them). Only the module of the subcommand
being run is imported, so `dpx --version` and `import core.cli` stay light (no duckdb, sqlglot,
opendp or pandas).

Every subcommand accepts `--json`, `--seed` and `--registry`; a handler returns a JSON-able
dict (printed as JSON with `--json`) or text. Every option value is checked while parsing by a
validator of `core.cliargs` (tests/faults/test_parser_validators.py walks every subcommand).

Error boundary (`main`, issue 17): never a traceback. `InputError` becomes one line on stderr and
exit code 2; so do an `sqlite3.Error` (the registry: damaged, full, read-only, locked) and an
`OSError` (ENOSPC, EACCES, ENAMETOOLONG, EISDIR, ...) that escaped a tool. Anything else is a
fault in DP Explorer: one generic line, exit 2 — unless `DPX_DEBUG=1`, which re-raises it so that
tests and developers see the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import signal
import sqlite3
import sys
from collections.abc import Callable, Sequence

from core import __version__, cliargs
from core.cli.outputs import guard_outputs
from core.errors import InputError
from core.files import remove_stale_work_directories

# subcommand name -> module with `register(subparsers, common)`. One line per subcommand.
SUBCOMMANDS: dict[str, str] = {
    "demos": "core.cli.demos",
    "datasets": "core.cli.demos",  # deprecated alias of `demos`
    "dataset": "core.cli.dataset",
    "report": "core.cli.report",
    "registry": "core.cli.registry",
    "htf": "core.cli.location",
    "compare": "core.cli.location",
    "release": "core.cli.location",
    "balance": "core.cli.balance",
    "sql": "core.cli.sql",
    "plan": "core.cli.plan",
}

# subcommand name -> its one-line help, for `dpx --help` (and an unknown command), which lists
# the subcommands without importing any of their modules (tests/cli/test_cold_start.py keeps
# these equal to the help each module registers).
SUMMARIES: dict[str, str] = {
    "demos": "list the demo datasets",
    "datasets": "deprecated alias of `dpx demos`",
    "dataset": "registered datasets: add, show, list, schema, budget, policy, reconcile",
    "report": "write a self-contained HTML report of a recorded release",
    "registry": "the registry's size and artefacts by kind (info); drop old demo/unregistered "
    "bodies (prune)",
    "htf": "release a DP location histogram with HTF",
    "compare": "compare HTF and baselines by mean relative error (evaluation only, not DP)",
    "release": "release a DP location histogram with a chosen method, or let 'auto' choose "
    "privately",
    "balance": "PP balancing: partition a table into sub-tables and (optionally) perturb it",
    "sql": "DP SQL: SELECT WITH ANONYMIZATION / DIFFERENTIAL_PRIVACY over private tables",
    "plan": "plan before spending: the epsilon a release needs for a target accuracy",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as InputError instead of exiting itself."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog}: {message} (see '{self.prog} --help')")


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand has: `--json`, `--seed` and `--registry`."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--json", action="store_true", help="print one machine-readable JSON object on stdout"
    )
    common.add_argument(
        "--seed",
        type=cliargs.SEED,
        default=None,
        help="use seeded (reproducible demo) noise instead of the secure sampler — not for real releases",
    )
    common.add_argument(
        "--registry",
        type=cliargs.DIRECTORY,
        metavar="DIR",
        default=None,
        help="registry directory (default: $DPX_REGISTRY, else ~/.dpx)",
    )
    return common


def _modules_for(argv: Sequence[str]) -> list[str] | None:
    """The modules to import for this command line: only the chosen subcommand's; none (None)
    when no subcommand is named (help, an unknown command: `SUMMARIES` lists the choices);
    all of them when a subcommand is named but not first."""
    first = next((a for a in argv if not a.startswith("-")), None)
    if first in SUBCOMMANDS:
        return [SUBCOMMANDS[first]]
    if not any(a in SUBCOMMANDS for a in argv):
        return None
    return list(dict.fromkeys(SUBCOMMANDS.values()))


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpx", description="DP Explorer: differential-privacy tools on your data."
    )
    parser.add_argument("--version", action="version", version=f"dpx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    common = common_options()
    # argv None: the whole parser, every subcommand's module imported (tests walk it)
    modules = list(dict.fromkeys(SUBCOMMANDS.values())) if argv is None else _modules_for(argv)
    if modules is None:  # list the subcommands, import none of them
        for name, summary in SUMMARIES.items():
            sub.add_parser(name, help=summary)
        return parser
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name and name.startswith(err.name):  # capability not built yet
                continue
            raise
        module.register(sub, common)
    return parser


def emit(result: dict | str, as_json: bool) -> None:
    """Print the result whole: the text is built first, so a failure prints nothing."""
    if as_json:
        if isinstance(result, str):
            result = {"message": result}
        text = _json_text(result)
    else:
        text = (
            result
            if isinstance(result, str)
            else json.dumps(result, indent=2, default=_json_default)
        )
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except OSError as exc:  # stdout is a full disk, a closed pipe, ...
        _silence_stdout()
        if isinstance(exc, BrokenPipeError):
            raise
        raise OSError(exc.errno, exc.strerror) from None


# Above this many characters --json is printed on one line: json.dumps with an indent runs
# Python's pure-Python encoder (1.3 s for 160k leaves), without one the C encoder.
PRETTY_JSON_MAX_CHARS = 200_000


def _json_text(result: dict) -> str:
    """The result as JSON: indented when small enough to read, compact (the fast C encoder)
    when large; the same JSON value either way."""
    text = json.dumps(result, default=_json_default, allow_nan=False)
    if len(text) <= PRETTY_JSON_MAX_CHARS:
        text = json.dumps(result, indent=2, default=_json_default, allow_nan=False)
    return text


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so that Python's final flush of the unwritten buffer cannot fail
    again (which would print 'Exception ignored' and exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # not a real file descriptor (tests capture stdout): nothing to flush later


def _json_default(obj):
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = None
    previous = _on_sigterm_raise()
    remove_stale_work_directories()  # private rows a killed run left (issue 29); never raises
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        handler: Callable | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return 2
        guard_outputs(parser, args)  # no output over an input or the registry: before any work
        emit(handler(args), getattr(args, "json", False))
        return 0
    except InputError as exc:
        return _fail(str(exc))
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except FileNotFoundError as exc:
        return _fail(f"file not found: {_short(exc.filename)}")
    except sqlite3.Error as exc:
        from core.registry.dberrors import registry_error

        return _fail(str(registry_error(exc, _registry_path(args))))
    except OSError as exc:
        return _fail(_os_error_line(exc))
    except KeyboardInterrupt:
        return _fail("interrupted.", code=130)
    except Terminated:
        return _fail("terminated (SIGTERM); no output file was left half-written.", code=143)
    except Exception as exc:
        if os.environ.get(DEBUG_ENV) == "1":
            raise
        return _fail(
            f"internal error ({type(exc).__name__}): a fault in DP Explorer, not in your input. "
            f"Fix: report it with the command line (run with {DEBUG_ENV}=1 for the details)."
        )
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


class Terminated(BaseException):
    """SIGTERM, raised where the process is, so that `with` blocks clean up: the atomic writer
    removes its temporaries and an open registry transaction rolls back."""


def _raise_terminated(signum, frame):
    raise Terminated()


def _on_sigterm_raise():
    """Install the SIGTERM handler (main thread only); returns the previous one."""
    try:
        return signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread (e.g. called from a server)
        return None


DEBUG_ENV = "DPX_DEBUG"


def _registry_path(args) -> str | None:
    """The registry file this command used (for the message), if it can be told."""
    if args is None:
        return None
    from pathlib import Path

    from core.registry.store import FILE_NAME, default_directory

    directory = getattr(args, "registry", None)
    return str((Path(directory).expanduser() if directory else default_directory()) / FILE_NAME)


def _short(value, limit: int = 160) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit // 2] + "..." + text[-limit // 2 :]


def _one_line(text: str) -> str:
    """Messages quote user input (paths, column names): never let it break the one line."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def _fail(message: str, code: int = 2) -> int:
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    print(f"dpx: error: {_one_line(message)}", file=sys.stderr)
    return code


def _os_error_line(exc: OSError) -> str:
    from core.files import ERRNO_FIXES

    where = _short(exc.filename) if exc.filename else "the output"
    fix = ERRNO_FIXES.get(exc.errno, "check the path and its permissions")
    return f"cannot use {where}: {exc.strerror or type(exc).__name__}. Fix: {fix}."


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
