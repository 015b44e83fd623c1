"""The README is the front door (issue 32): short, every relative link resolves to a file in the
repository, and the `dpx` release it shows really runs on the shipped demo file."""

from __future__ import annotations

import re
import shlex

from core import cli
from tests.docs_links import ROOT, broken_links, prose

README = ROOT / "README.md"
MAX_WORDS = 1600


def test_readme_is_short():
    words = len(README.read_text(encoding="utf-8").split())
    assert words <= MAX_WORDS, (
        f"README.md has {words} words (at most {MAX_WORDS}): move the detail into a page under "
        "docs/ and link it from the README's map."
    )


def test_every_relative_link_in_the_readme_resolves():
    assert broken_links(README, ROOT) == []


def test_the_readme_has_a_map_of_the_documentation_and_links_every_page():
    """Every page listed in mkdocs.yml's nav that a reader starts from is in the README's map."""
    text = prose(README.read_text(encoding="utf-8"))
    nav = re.findall(r":\s*([\w/-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    starts = [page for page in nav if "/" not in page or page == "benchmarks/index.md"]
    missing = [p for p in starts if p != "index.md" and f"(docs/{p}" not in text]
    assert missing == []


def readme_release_command() -> list[str]:
    """The argv of the `dpx` command in the README's section "A first release"."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## A first release", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    argv = shlex.split(block.replace("\\\n", " "))
    assert argv[0] == ".venv/bin/dpx", argv
    return argv[1:]


def test_the_readme_release_command_runs(registry_dir, monkeypatch, capsys):
    """Run from the repository root as the README says, with the registry in a temporary
    directory: a secure release of the demo table (nothing tracked is written)."""
    monkeypatch.chdir(ROOT)
    argv = readme_release_command()
    assert argv[0] == "sql" and "demo_data/sql/employee.csv" in " ".join(argv)
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("dept | employees\n")
    assert "noise: secure" in out
    assert re.search(r"^HR \| \d+ ± \d+$", out, re.M)
    assert "unregistered run #1" in out
    assert (registry_dir / "registry.sqlite").exists()


def test_the_readme_release_command_with_a_seed_is_a_labelled_demo(registry_dir, capsys):
    assert cli.main([*readme_release_command(), "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "noise: seeded" in out and "not a release" in out
    # What the README says of the output: HR and Sales are released, the three-person IT
    # department is missing (seeded, so this does not depend on a lucky draw).
    assert re.search(r"^HR \| \d+ ± \d+$", out, re.M) and re.search(r"^Sales \| ", out, re.M)
    assert "IT |" not in out


def test_the_readme_has_the_front_door_sections():
    """Issue 32: the guarantee per tool, the two commands, a release, the threat model (linking
    its page), the limits and the map of the documentation."""
    text = README.read_text(encoding="utf-8")
    for heading in (
        "## The two commands",
        "## A first release from the command line",
        "## Threat model and public facts",
        "## Limits that matter most",
        "## Documentation",
    ):
        assert f"\n{heading}\n" in text, heading
    threat = text.split("## Threat model and public facts", 1)[1].split("\n## ", 1)[0]
    assert "(docs/threat-model.md)" in threat
    intro = text.split("\n## ", 1)[0]
    for tool in ("**Location histograms**", "**PP balancing**", "**DP SQL**"):
        assert tool in intro, tool
