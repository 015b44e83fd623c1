"""`dpx dataset share NAME --analyst ID --epsilon E [--delta D]`: the owner gives a named
analyst a share of a dataset's budget (issue 33; `core.registry.shares`), and the share lines
`dpx dataset show` prints. An analyst declares who they are with `DPX_ANALYST=ID`."""

from __future__ import annotations

from core import cliargs
from core.governance import current_role, require_owner
from core.registry import Registry


def register_share(actions, common) -> None:
    share = actions.add_parser(
        "share",
        parents=[common],
        help="give a named analyst a share of a dataset's budget (owner)",
    )
    share.add_argument("name", type=cliargs.NAME, metavar="NAME")
    share.add_argument(
        "--analyst",
        type=cliargs.TEXT,
        required=True,
        metavar="ID",
        help="the analyst's declared identity (what they set as DPX_ANALYST)",
    )
    share.add_argument(
        "--epsilon", type=cliargs.EPSILON, required=True, help="the analyst's total epsilon"
    )
    share.add_argument(
        "--delta", type=cliargs.DELTA, default=0.0, help="the analyst's total delta (default 0)"
    )
    share.set_defaults(handler=run_share)


def shares_json(registry: Registry, name: str) -> list[dict]:
    return [s.to_json() for s in registry.shares(name)]


def share_lines(shares: list[dict]) -> list[str]:
    """One line per analyst's share, for `dpx dataset show`."""
    lines = ["analyst shares (each release charged to the dataset and to its analyst):"] * bool(
        shares
    )
    for s in shares:
        lines.append(
            f"  {s['analyst']}: epsilon spent {s['epsilon_spent']:g} of {s['epsilon']:g}, "
            f"delta spent {s['delta_spent']:g} of {s['delta']:g}"
        )
    return lines


def run_share(args) -> dict | str:
    require_owner(current_role(), "giving an analyst a share of a dataset's budget")
    registry = Registry(args.registry)
    share = registry.set_share(args.name, args.analyst, args.epsilon, args.delta)
    if args.json:
        return {"dataset": args.name, **share.to_json()}
    return (
        f"{args.name}: analyst {share.analyst} may spend epsilon {share.epsilon:g}, delta "
        f"{share.delta:g} (spent so far: epsilon {share.epsilon_spent:g}, delta "
        f"{share.delta_spent:g}; recorded)"
    )
