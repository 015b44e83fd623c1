"""`dpx`: the command-line face of DP Explorer.

Capabilities add subcommands by providing a module with `register(subparsers, common)`
(listed in `SUBCOMMAND_MODULES`). Every subcommand accepts `--json` and `--seed`; a handler
returns a JSON-able dict (printed as JSON with `--json`) or text. `InputError` becomes a
one-line message on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
from collections.abc import Callable, Sequence

from core import __version__
from core.errors import InputError

SUBCOMMAND_MODULES = (
    "core.data.cli",
    "core.spatial.cli",
    "core.balancing.cli",
    "core.dpsql.cli",
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as InputError instead of exiting itself."""

    def error(self, message: str):  # noqa: D401 - argparse API
        raise InputError(f"{self.prog}: {message} (see '{self.prog} --help')")


def common_options() -> argparse.ArgumentParser:
    """Options every subcommand has: `--json` and `--seed`."""
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
    return common


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpx", description="DP Explorer: differential-privacy tools on your data."
    )
    parser.add_argument("--version", action="version", version=f"dpx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    common = common_options()
    for name in SUBCOMMAND_MODULES:
        if importlib.util.find_spec(name) is None:  # capability not built yet
            continue
        importlib.import_module(name).register(sub, common)
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
    try:
        parser = build_parser()
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
