"""`dpx report RELEASE_ID --out FILE.html [--registry DIR]`: a release's stakeholder report."""

from __future__ import annotations

from core import cliargs
from core.errors import InputError
from core.registry.registry import Registry
from core.reports import report_html, write_report


def register(sub, common) -> None:
    p = sub.add_parser(
        "report",
        parents=[common],
        help="write a self-contained HTML report of a recorded release",
    )
    p.add_argument(
        "release_id",
        type=cliargs.RELEASE_ID,
        metavar="RELEASE_ID",
        help="the release id (see `dpx dataset show`)",
    )
    p.add_argument(
        "--out",
        type=cliargs.HTML_REPORT,
        required=True,
        metavar="FILE.html",
        help="the HTML file to write",
    )
    p.set_defaults(handler=run)


def run(args) -> dict | str:
    try:
        release_id = int(str(args.release_id).lstrip("#"))
    except ValueError:
        raise InputError(f"RELEASE_ID must be a number, got '{args.release_id}'.") from None
    if not str(args.out).lower().endswith((".html", ".htm")):
        raise InputError(f"--out must end in .html, got '{args.out}'.")
    registry = Registry(args.registry)
    path = write_report(args.out, report_html(registry, release_id))
    return {"release_id": release_id, "out": str(path)} if args.json else f"wrote {path}"
