"""Where a request came from: the front door's part of a release's record, typed (issue 28).

Every tool records its own typed parameters (`LocationParams`, `PPParams`, the DP SQL query) and,
beside them, an `Origin`: which front door asked (the app or the CLI), the app session that asked
(so a reload or a restart finds what it paid for), the page's data key, the seed of a seeded
run, and the public options the door adds as given (the CLI's, without file paths on a
registered dataset: `core.cli.common.params_of`). The tool's own parameters win over a door
option of the same name: a door can add context, never change what was released.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Via(StrEnum):
    APP = "app"
    CLI = "cli"


@dataclass(frozen=True)
class Origin:
    """The front door's part of a release's record (see the module docstring)."""

    via: Via
    session: str | None = None  # the app's browser session
    data: str | None = None  # the page's data key (a demo, an upload's digest, a dataset)
    seed: int | None = None  # a seeded run's seed (None: secure noise)
    options: tuple[tuple[str, Any], ...] = ()  # public options as given, by name

    @classmethod
    def app(cls, session: str, data: str | None = None, seed: int | None = None,
            **options: Any) -> Origin:  # fmt: skip
        """A request from a page of this browser session."""
        return cls(Via.APP, session, data, seed, tuple(sorted(options.items())))

    @classmethod
    def cli(cls, options: Mapping[str, Any] = (), seed: int | None = None) -> Origin:
        """A request from a `dpx` command, with its public options (`params_of(args)`)."""
        given = dict(options)
        return cls(Via.CLI, seed=given.pop("seed", seed), options=tuple(sorted(given.items())))

    def record(self) -> dict[str, Any]:
        """What the registry stores for this door, beside the tool's own parameters."""
        out: dict[str, Any] = dict(self.options)
        out["via"] = self.via.value
        out["seed"] = self.seed
        if self.session is not None:
            out["session"] = self.session
        if self.data is not None:
            out["data"] = self.data
        return out

    def around(self, tool_record: Mapping[str, Any]) -> dict[str, Any]:
        """The whole record: the door's part, then the tool's typed parameters over it."""
        return {**self.record(), **dict(tool_record)}
