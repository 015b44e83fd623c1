"""The README's DP SQL reference is the one the modules enforce (issue 9: the allowlist and the
rule codes are documented in the README). The resource-limit table depends on the machine
(threads, memory), so only the machine-independent tables are compared."""

from pathlib import Path

import pytest

from core.dpsql import docs

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.parametrize(
    "table", [docs.rule_table, docs.checks_table, docs.allowlist_table, docs.options_table]
)
def test_readme_holds_the_generated_table(table):
    assert table() in README.read_text(encoding="utf-8"), (
        f"README.md is out of date: paste the output of `python -m core.dpsql.docs` "
        f"({table.__name__})"
    )
