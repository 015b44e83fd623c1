"""`dpx datasets`: list the demo datasets."""

from __future__ import annotations

from core.data.demos import all_demos


def register(sub, common) -> None:
    p = sub.add_parser("datasets", parents=[common], help="list the demo datasets")
    p.set_defaults(handler=run)


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
