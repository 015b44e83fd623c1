"""`dpx`: the command-line face of DP Explorer.

Subcommands are registered lazily: `SUBCOMMANDS` maps each subcommand name to the module that
provides `register(subparsers, common)`. Adding one is a one-line entry in that mapping
(a module may register several names; list each of them). Only the module of the subcommand
being run is imported, so `dpx --version` and `import core.cli` stay light (no duckdb, sqlglot,
opendp or pandas).

Every subcommand accepts `--json`, `--seed` and `--registry`; a handler returns a JSON-able
dict (printed as JSON with `--json`) or text. `InputError` becomes a one-line message on stderr
and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence

from core import __version__
from core.errors import InputError

# subcommand name -> module with `register(subparsers, common)`. One line per subcommand.
SUBCOMMANDS: dict[str, str] = {
    "demos": "core.cli.demos",
    "datasets": "core.cli.demos",  # deprecated alias of `demos`
    "dataset": "core.cli.dataset",
    "report": "core.cli.report",
    "htf": "core.spatial.cli",
    "compare": "core.spatial.cli",
    "release": "core.spatial.release_cli",
    "balance": "core.balancing.cli",
    "sql": "core.dpsql.cli",
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
        type=int,
        default=None,
        help="use seeded (reproducible demo) noise instead of the secure sampler — not for real releases",
    )
    common.add_argument(
        "--registry",
        metavar="DIR",
        default=None,
        help="registry directory (default: $DPX_REGISTRY, else ~/.dpx)",
    )
    return common


def _modules_for(argv: Sequence[str]) -> list[str]:
    """The modules to import for this command line: only the chosen subcommand's, or all
    of them (help, an unknown command) so that argparse can list every choice."""
    first = next((a for a in argv if not a.startswith("-")), None)
    if first in SUBCOMMANDS:
        return [SUBCOMMANDS[first]]
    if any(a in ("--version",) for a in argv) and first is None:
        return []
    return list(dict.fromkeys(SUBCOMMANDS.values()))


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpx", description="DP Explorer: differential-privacy tools on your data."
    )
    parser.add_argument("--version", action="version", version=f"dpx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    common = common_options()
    modules = _modules_for(list(argv) if argv is not None else [])
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
    if as_json:
        if isinstance(result, str):
            result = {"message": result}
        json.dump(result, sys.stdout, indent=2, default=_json_default, allow_nan=False)
        sys.stdout.write("\n")
    else:
        print(
            result
            if isinstance(result, str)
            else json.dumps(result, indent=2, default=_json_default)
        )


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
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        handler: Callable | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return 2
        emit(handler(args), getattr(args, "json", False))
        return 0
    except InputError as exc:
        print(f"dpx: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"dpx: error: file not found: {exc.filename}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
