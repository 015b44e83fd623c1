"""Each check pass against its own fixture file, tests/dpsql/checks/<pass>.sql.

An entry `-- @ <id>: ok` must pass every check up to and including this pass; an entry
`-- @ <id>: DPX-XXXX` must pass every earlier check and be refused by THIS pass with that code
(and a fix). Macros as in the hostile corpus ($DP: the paper form at ε 1, δ 1e-5, C_u 1). The
catalogue is the oracle's D: Users, Orders (private, unit uid), Depts, Pub (public).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.dpsql.check.passes import CHECKS, Checking
from core.dpsql.parse.dialect import parse_statements
from core.dpsql.parse.text import check_text
from core.errors import InputError
from tests.dpsql.oracle.corpus import expand
from tests.dpsql.oracle.neighbours import Victim, neighbours

FIXTURES = Path(__file__).parent / "checks"
MARKER = re.compile(r"^-- @ (?P<id>[a-z0-9_]+): (?P<expect>ok|DPX-[A-Z]\d{3})$")
BY_NAME = {c.__name__: c for c in CHECKS}


def _entries() -> list[tuple[str, str, str, str]]:
    out = []
    for path in sorted(FIXTURES.glob("*.sql")):
        current, body = None, []
        for line in [*path.read_text(encoding="utf-8").splitlines(), "-- @ end: ok"]:
            match = MARKER.match(line)
            if match:
                if current is not None:
                    out.append((path.stem, current[0], current[1], expand("\n".join(body))))
                current, body = (match["id"], match["expect"]), []
            else:
                body.append(line)
    return out


ENTRIES = _entries()


@pytest.fixture(scope="module")
def catalog():
    return neighbours(Victim.HEAVY).with_victim


def test_every_pass_has_an_accepted_and_a_refused_entry():
    for name in BY_NAME:
        outcomes = {e[2] == "ok" for e in ENTRIES if e[0] == name}
        assert outcomes == {True, False}, name


@pytest.mark.parametrize(
    ("name", "expect", "sql"),
    [pytest.param(n, x, s, id=f"{n}/{i}") for n, i, x, s in ENTRIES],
)
def test_pass_fixture(catalog, name, expect, sql):
    target = BY_NAME[name]
    check_text(sql)
    state = Checking(sql, catalog, {}, parse_statements(sql))
    for check in CHECKS:
        if check is target:
            break
        check(state)  # every earlier pass accepts the entry
    if expect == "ok":
        target(state)
        return
    with pytest.raises(InputError) as err:
        target(state)
    text = str(err.value)
    assert text.startswith(expect) and "Fix" in text, text
