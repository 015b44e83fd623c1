"""`dpx registry info|prune [--registry DIR]`: the registry's size, and pruning by policy.

`info` states the database file's size and the bytes of stored artefacts by kind of run
(registered releases, unregistered runs, demo runs). `prune --older-than 7d` (owner) drops the
artefact bodies of demo and unregistered runs recorded more than that long ago: every record
stays (ids, costs, hashes, mechanisms), registered releases and their charges are never touched,
the prune is recorded and the file is VACUUMed (`core.registry.storage`).
"""

from __future__ import annotations

from core import cliargs
from core.governance import current_role, require_owner
from core.registry.registry import Registry
from core.registry.storage import StorageInfo, parse_age

HELP = "the registry's size and artefacts by kind (info); drop old demo/unregistered bodies (prune)"


def register(sub, common) -> None:
    p = sub.add_parser(
        "registry",
        parents=[common],
        help=HELP,
        description="The registry's size, and pruning of artefacts it need not keep.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    actions.required = True
    info = actions.add_parser(
        "info", parents=[common], help="the file's size and the stored artefacts by kind"
    )
    info.set_defaults(handler=run_info)
    prune = actions.add_parser(
        "prune",
        parents=[common],
        help="drop demo and unregistered runs' artefact bodies older than an age (owner)",
    )
    prune.add_argument(
        "--older-than",
        type=cliargs.TEXT,
        required=True,
        metavar="AGE",
        help="a number and a unit (s, m, h, d, w), e.g. 7d; 0d prunes every such body",
    )
    prune.set_defaults(handler=run_prune)


def _mb(n: int) -> str:
    return f"{n / 1e6:.2f} MB"


def info_text(info: StorageInfo) -> str:
    lines = [f"{info.path}: {_mb(info.file_bytes)} on disk ({info.prunes} prune(s) recorded)"]
    for k in info.kinds:
        lines.append(
            f"  {k.kind:<13} {k.runs:>6} run(s), {k.bodies:>6} artefact(s) stored in "
            f"{_mb(k.stored_bytes)} (JSON {_mb(k.json_bytes)}), {k.not_kept} not kept"
        )
    return "\n".join(lines)


def run_info(args) -> dict | str:
    info = Registry(args.registry).storage_info()
    return info.to_json() if args.json else info_text(info)


def run_prune(args) -> dict | str:
    require_owner(current_role(), "pruning the registry")
    parse_age(args.older_than)  # bad input: one line, exit 2, before the registry is opened
    pruned = Registry(args.registry).prune(args.older_than)
    if args.json:
        return pruned.to_json()
    return (
        f"pruned the artefact bodies of {len(pruned.runs)} demo/unregistered run(s) older than "
        f"{pruned.older_than} ({_mb(pruned.stored_bytes)}); every record and charge kept. "
        f"File: {_mb(pruned.file_bytes_before)} -> {_mb(pruned.file_bytes_after)}."
    )
