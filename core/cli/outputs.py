"""No `dpx` command may write over what it reads (issue 29).

`guard_outputs(parser, args)` runs in `core.cli.main` right after the command line is parsed,
before any handler reads a file, opens a dataset or charges a budget. It finds the chosen
subcommand's options by their validators (`core.cliargs`): every `OutputFile` option is an
output, every `InputFile`/`TableSpec` option an input. An output is refused (exit 2, one line)
when it, or a companion the command writes beside it (a CSV's `.csv.json` sidecar, a PP
publication's `.metadata.json`, a seeded publication's marked name), is one of the inputs, a
file of any dataset in the registry, or the live registry file (`core.files.Outputs`: resolved
paths and (st_dev, st_ino), so symlinks and hard links count).

A new option with an `OutputFile` validator is guarded without any change here.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from core import cliargs
from core.files import Outputs


def _chosen_actions(parser: argparse.ArgumentParser, args) -> Iterator[argparse.Action]:
    """The actions of the parser and of each subparser the command line chose."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            sub = action.choices.get(name) if name is not None else None
            if sub is not None:
                yield from _chosen_actions(sub, args)
        else:
            yield action


def _values(args, action: argparse.Action) -> list[str]:
    value = getattr(args, action.dest, None)
    if value is None:
        return []
    return [str(v) for v in (value if isinstance(value, list | tuple) else [value])]


def _flag(action: argparse.Action) -> str:
    return action.option_strings[-1] if action.option_strings else action.dest.upper()


def _balance_companions(args, out: str) -> list[str]:
    """`dpx balance --perturb`: the published name (seeded: marked) and its metadata."""
    from core.balancing.names import published_name
    from core.privacy import Noise

    written = published_name(out, Noise.from_seed(getattr(args, "seed", None)))
    return [str(written), str(written.with_name(written.stem + ".metadata.json"))]


def _location_companions(args, out: str) -> list[str]:
    from core.spatial.export import CSV_SIDECAR_SUFFIX

    return [out + CSV_SIDECAR_SUFFIX] if out.lower().endswith(".csv") else []


# command -> the files it writes beside (or instead of) `--out`
COMPANIONS: dict[str, Callable[[object, str], list[str]]] = {
    "balance": _balance_companions,
    "htf": _location_companions,
    "release": _location_companions,
}


def _protect_registry(guard: Outputs, args) -> None:
    """The live registry file and, when it exists and opens, every registered dataset's files
    (a registry that cannot be opened protects its file; the command reports the rest)."""
    from core.errors import InputError
    from core.registry.store import FILE_NAME, default_directory

    directory = Path(args.registry).expanduser() if getattr(args, "registry", None) else None
    database = (directory or default_directory()) / FILE_NAME
    guard.protect_registry(database)
    if not database.is_file():
        return
    from core.governance.roles import Role, current_role
    from core.registry import Registry

    try:
        registry = Registry(directory)
        try:
            datasets = registry.datasets()
        finally:
            registry.close()
    except (InputError, OSError, ValueError):
        return
    except Exception:  # noqa: BLE001 - sqlite3.Error: the command itself reports it
        return
    analyst = current_role() is Role.ANALYST  # never told which dataset a path belongs to
    for dataset in datasets:
        what = f"a file of the registered dataset '{dataset.name}'"
        for table in dataset.tables:
            guard.protect(table.path, "a registered dataset's file" if analyst else what)


def guard_outputs(parser: argparse.ArgumentParser, args) -> None:
    """Refuse (InputError) an output of this command line that would replace one of its inputs,
    a registered dataset's file or the live registry. Nothing has been read or charged yet."""
    actions = list(_chosen_actions(parser, args))
    outputs = [
        (_flag(a), v) for a in actions if isinstance(a.type, cliargs.OutputFile)
        for v in _values(args, a)
    ]  # fmt: skip
    if not outputs:
        return
    guard = Outputs()
    for action in actions:
        if isinstance(action.type, cliargs.InputFile):
            for value in _values(args, action):
                guard.protect(value, f"{_flag(action)}, a file this command reads")
        elif isinstance(action.type, cliargs.TableSpec):
            for value in _values(args, action):
                _, sep, path = value.partition("=")
                if sep and path.strip():
                    guard.protect(
                        path.strip(), f"{_flag(action)} {value}, a file this command reads"
                    )
    _protect_registry(guard, args)
    companions = COMPANIONS.get(getattr(args, "command", None) or "")
    for flag, out in outputs:
        guard.check(flag, out)
        for written in companions(args, out) if companions else []:
            if os.fspath(written) != out:
                guard.check(flag, out, written)
