"""The documentation site (docs/, mkdocs.yml): every page in the nav exists, every page is in the
nav, and every relative link of every page resolves to a file of the site (and to a heading,
for links with an anchor). `make test` also builds the site with `mkdocs build --strict`; this
test needs no MkDocs and names the broken link directly."""

from __future__ import annotations

import re

import pytest

from tests.docs_links import ROOT, broken_links

DOCS = ROOT / "docs"
NAV = re.findall(r":\s*\"?([\w/.-]+\.md)\"?\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
PAGES = sorted(DOCS.rglob("*.md"))


def test_every_nav_entry_is_a_page():
    assert NAV, "mkdocs.yml lists no pages"
    assert [p for p in NAV if not (DOCS / p).is_file()] == []


def test_every_page_is_in_the_nav():
    listed = set(NAV)
    assert [str(p.relative_to(DOCS)) for p in PAGES if str(p.relative_to(DOCS)) not in listed] == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_every_relative_link_resolves_inside_the_site(page):
    assert broken_links(page, DOCS) == []


def test_the_link_check_catches_a_missing_file_anchor_and_a_link_out_of_the_site(tmp_path):
    """Positive control: the checker reports what mkdocs --strict would refuse."""
    site = tmp_path / "docs"
    site.mkdir()
    (site / "a.md").write_text("# A page\n\n## Option ranges\n", encoding="utf-8")
    page = site / "b.md"
    page.write_text(
        "[ok](a.md#option-ranges) [gone](c.md) [anchor](a.md#nope) [out](../x.md) "
        "`[code](ignored.md)` [web](https://example.org)\n",
        encoding="utf-8",
    )
    (tmp_path / "x.md").write_text("x", encoding="utf-8")
    problems = broken_links(page, site)
    assert len(problems) == 3, problems
    assert any("c.md" in p for p in problems)
    assert any("#nope" in p for p in problems)
    assert any("../x.md" in p for p in problems)
