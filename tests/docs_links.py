"""Helpers for the README and documentation tests: markdown links and heading anchors.

Anchors are computed as MkDocs computes them (Python-Markdown's `toc` slugify on the heading's
text with its markdown removed), so a README link to `docs/x.md#some-heading` is checked
against the same id the site gives that heading.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# [text](target) and ![alt](target); the target ends at whitespace or ")".
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def prose(text: str, inline_code: bool = False) -> str:
    """The markdown without fenced code blocks and (unless `inline_code`) without inline code:
    links there are not links, but headings keep their code's text in their anchors."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line if inline_code else re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def links(text: str) -> list[str]:
    return LINK.findall(prose(text))


def is_external(target: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I))


def slug(heading: str) -> str:
    """Python-Markdown's `toc` slugify of a heading's visible text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links -> their text
    text = re.sub(r"[`*]", "", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    """The ids of a markdown file's headings (duplicates get _1, _2 as in Python-Markdown)."""
    seen: set[str] = set()
    for line in prose(path.read_text(encoding="utf-8"), inline_code=True).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        anchor, n = base, 0
        while anchor in seen:
            n += 1
            anchor = f"{base}_{n}"
        seen.add(anchor)
    return seen


def broken_links(page: Path, within: Path) -> list[str]:
    """Every relative link of `page` that does not resolve to a file under `within` (or to a
    heading of it, for `file.md#anchor` and `#anchor`)."""
    problems = []
    for target in links(page.read_text(encoding="utf-8")):
        if is_external(target):
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page.resolve()
        if not resolved.is_relative_to(within.resolve()):
            problems.append(f"{target}: outside {within.name}/")
            continue
        if not resolved.exists():
            problems.append(f"{target}: no such file")
            continue
        if resolved.is_dir():
            problems.append(f"{target}: a directory, not a file")
            continue
        if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            problems.append(f"{target}: no heading '#{anchor}' in {resolved.name}")
    return problems
