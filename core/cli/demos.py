"""`dpx demos`: list the demo datasets (`dpx datasets` is a deprecated alias)."""

from __future__ import annotations

import sys

from core.data.demos import all_demos

DEPRECATED_ALIAS_NOTE = (
    "dpx: warning: `dpx datasets` is deprecated; use `dpx demos` "
    "(`dpx dataset` manages registered datasets)."
)


def register(sub, common) -> None:
    p = sub.add_parser("demos", parents=[common], help="list the demo datasets")
    p.set_defaults(handler=run)
    alias = sub.add_parser("datasets", parents=[common], help="deprecated alias of `dpx demos`")
    alias.set_defaults(handler=run_deprecated_alias)


def run_deprecated_alias(args) -> dict | str:
    print(DEPRECATED_ALIAS_NOTE, file=sys.stderr)
    return run(args)


def run(args) -> dict | str:
    demos = [d.describe() for d in all_demos()]
    if args.json:
        return {"datasets": demos}
    if not demos:
        return "no demo datasets registered"
    width = max(len(d["name"]) for d in demos)
    return "\n".join(
        f"{d['name']:<{width}}  [{d['kind']}] {d['description']} (licence: {d['licence']})"
        for d in demos
    )
