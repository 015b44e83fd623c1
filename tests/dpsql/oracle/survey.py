"""Run the whole corpus through the oracle and print one JSON line per failing entry.

    python -m tests.dpsql.oracle.survey [--out FILE]

Used to record which entries fail on a given checkout (the KNOWN_OPEN list of
`tests/dpsql/test_differencing.py` is maintained from its output)."""

from __future__ import annotations

import argparse
import json
import time

from .corpus import load
from .harness import Victim, difference


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", help="also write the JSON list to this file")
    parser.add_argument("--only", nargs="*", help="corpus classes (file stems) to run")
    args = parser.parse_args()
    start = time.perf_counter()
    failing = []
    entries = [e for e in load() if not args.only or e.klass in args.only]
    for entry in entries:
        problems = []
        for victim in Victim:
            verdict = difference(entry.sql, victim)
            if verdict.violations:
                problems.append(verdict.summary())
        if problems:
            row = {"id": entry.id, "note": entry.note, "violations": problems}
            failing.append(row)
            print(json.dumps(row), flush=True)
    summary = {
        "entries": len(entries),
        "failing": len(failing),
        "seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(summary))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"summary": summary, "failing": failing}, fh, indent=1)


if __name__ == "__main__":
    main()
