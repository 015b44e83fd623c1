"""Every value-taking option of every `dpx` subcommand is checked by a validator of
core/cliargs.py (or by `choices=`), so a new option cannot skip the checks (issue 17 item 4)."""

from __future__ import annotations

import argparse

import pytest

from core import cliargs
from core.cli import SUBCOMMANDS, build_parser


def _subparsers(parser: argparse.ArgumentParser, prefix: str = "dpx"):
    """(name, parser) for every (nested) subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _subparsers(sub, f"{prefix} {name}")


def all_commands() -> dict[str, argparse.ArgumentParser]:
    return dict(_subparsers(build_parser()))


def _takes_a_value(action: argparse.Action) -> bool:
    return action.nargs != 0 and not isinstance(
        action, argparse._SubParsersAction | argparse._HelpAction | argparse._VersionAction
    )


def value_options() -> list[tuple[str, argparse.Action]]:
    out = []
    for command, parser in all_commands().items():
        for action in parser._actions:
            if _takes_a_value(action):
                out.append((command, action))
    return out


def test_every_subcommand_is_walked():
    names = {c.split()[1] for c in all_commands()}
    assert names == set(SUBCOMMANDS)
    assert {"dpx dataset backup", "dpx dataset restore"} <= set(all_commands())


def test_every_value_option_has_a_validator_from_core_cliargs():
    missing = [
        f"{command} {'/'.join(action.option_strings) or action.dest}"
        for command, action in value_options()
        if not isinstance(action.type, cliargs.Validator) and not action.choices
    ]
    assert missing == [], "options without a core.cliargs validator: " + ", ".join(missing)


def _accepts(action: argparse.Action, text: str) -> bool:
    try:
        action.type(text)
    except argparse.ArgumentTypeError:
        return False
    return True


NUMERIC = (cliargs.Real, cliargs.Integer, cliargs.Rational, cliargs.ReleaseId)
PATHS = (cliargs.InputFile, cliargs.OutputFile, cliargs.Directory, cliargs.TableSpec)


def _options_of(kinds) -> list[tuple[str, argparse.Action]]:
    return [(c, a) for c, a in value_options() if isinstance(a.type, kinds)]


@pytest.mark.parametrize(
    "bad", ["nan", "inf", "-inf", "1e308", "-1e308", "9" * 5000, "1e-5000", "", "0x10"]
)
def test_every_numeric_option_refuses_non_finite_huge_and_malformed_numbers(bad):
    accepted = []
    for command, action in _options_of(NUMERIC):
        if bad == "1e-5000" and isinstance(action.type, cliargs.Real) and _accepts(action, "0"):
            continue  # 1e-5000 is 0.0, valid where 0 is (delta, budgets, stop counts)
        try:
            action.type(bad)
        except argparse.ArgumentTypeError as err:
            assert "\n" not in str(err)
        else:
            accepted.append(f"{command} {action.option_strings or action.dest}")
    assert accepted == []


def test_negative_seeds_are_refused_by_every_subcommand():
    seeds = [(c, a) for c, a in value_options() if "--seed" in a.option_strings]
    assert {c for c, _ in seeds} == set(all_commands())
    for _, action in seeds:
        with pytest.raises(argparse.ArgumentTypeError):
            action.type("-1")
        assert action.type(str(2**63 - 1)) == 2**63 - 1
        with pytest.raises(argparse.ArgumentTypeError):
            action.type(str(2**63))


def test_path_options_exist_and_all_check_length():
    options = _options_of(PATHS)
    assert len(options) >= 10
    for _, action in options:
        prefix = "t=" if isinstance(action.type, cliargs.TableSpec) else ""
        assert not _accepts(action, prefix + "/" + "x" * 300)
        assert not _accepts(action, prefix + "/tmp/" + "d/" * 2100 + "x.csv")


def test_grid_limit_matches_the_spatial_package():
    from core.dpsql.check.ranges import MAX_GROUPS
    from core.dpsql.limits import MAX_TIMEOUT_S
    from core.spatial.grid import MAX_GRID

    assert cliargs.GRID_MAX == MAX_GRID
    assert cliargs.TIMEOUT_MAX_S == MAX_TIMEOUT_S
    assert cliargs.MAX_GROUPS == MAX_GROUPS
