"""The documentation's DP SQL reference is the one the modules enforce (issue 9: the allowlist and
the rule codes are documented; issue 32: they moved from the README to the site's page
docs/dpsql-rules.md). The resource-limit table depends on the machine (threads, memory), so only
the machine-independent tables are compared."""

from pathlib import Path

import pytest

from core.dpsql import docs

PAGE = Path(__file__).resolve().parents[2] / "docs" / "dpsql-rules.md"


@pytest.mark.parametrize(
    "table", [docs.rule_table, docs.checks_table, docs.allowlist_table, docs.options_table]
)
def test_the_rules_page_holds_the_generated_table(table):
    assert table() in PAGE.read_text(encoding="utf-8"), (
        f"docs/dpsql-rules.md is out of date: paste the output of `python -m core.dpsql.docs` "
        f"({table.__name__})"
    )


def test_the_generator_prints_the_page_headings():
    """The generator's sections are the page's (one heading level down on the page)."""
    text = PAGE.read_text(encoding="utf-8")
    for heading in ("Rule codes", "Expression allowlist", "Resource limits", "Option ranges"):
        assert f"## {heading}" in text
