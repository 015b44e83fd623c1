"""The hostile-query corpus: `tests/dpsql/corpus/<class>.sql`, one file per attack class.

Format: each entry starts with a marker line `-- @ <id>: <what the attack tries>` and runs to
the next marker. Macros keep the files readable:
- `$DP` is `SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5,
  max_groups_contributed = 1)`;
- `$OPEN(n)` / `$CLOSE(n)` are n opening / closing parentheses (deep nesting).
Entry ids are `<class>/<id>` and must be unique.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent.parent / "corpus"
DP = "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1)"
MARKER = re.compile(r"^-- @ (?P<id>[a-z0-9_]+): (?P<note>.+)$")
MACRO = re.compile(r"\$(OPEN|CLOSE)\((\d+)\)")


@dataclass(frozen=True)
class Entry:
    id: str  # "<class>/<name>"
    klass: str
    note: str
    sql: str


def expand(text: str) -> str:
    text = text.replace("$DP", DP)
    return MACRO.sub(lambda m: ("(" if m.group(1) == "OPEN" else ")") * int(m.group(2)), text)


def parse_file(path: Path) -> list[Entry]:
    klass = path.stem
    entries: list[Entry] = []
    current: tuple[str, str] | None = None
    body: list[str] = []

    def flush():
        if current is not None:
            sql = expand("\n".join(body).strip())
            if not sql:
                raise ValueError(f"{path.name}: entry {current[0]} has no SQL")
            entries.append(Entry(f"{klass}/{current[0]}", klass, current[1], sql))

    for line in path.read_text(encoding="utf-8").splitlines():
        match = MARKER.match(line)
        if match:
            flush()
            current, body = (match["id"], match["note"]), []
        elif current is not None:
            body.append(line)
    flush()
    return entries


def load() -> list[Entry]:
    entries = [e for path in sorted(CORPUS_DIR.glob("*.sql")) for e in parse_file(path)]
    ids = [e.id for e in entries]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise ValueError(f"duplicate corpus ids: {sorted(duplicates)}")
    return entries
