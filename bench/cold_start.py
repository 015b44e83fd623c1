"""Cold start of the CLI: wall time of `dpx --help` and `dpx sql --help` as whole processes
(median of --repeat runs), and which heavy libraries each imports. Prints JSON.

    python bench/cold_start.py [--repo DIR] [--repeat 7]

--repo points at another checkout (with its own .venv) to measure it the same way, e.g. the
main branch before the change."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

HEAVY = ("pandas", "numpy", "duckdb", "sqlglot", "pyarrow", "opendp")
PROBE = """
import contextlib, io, sys
from core.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(",".join(m for m in %r if m in sys.modules))
"""


def measure(repo: Path, argv: list[str], repeat: int) -> dict:
    python = str(repo / ".venv" / "bin" / "python")
    times, heavy = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(
            [python, "-c", PROBE % (HEAVY,), *argv],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(time.perf_counter() - start)
        heavy = done.stdout.strip()
    return {
        "argv": argv,
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "heavy_imported": heavy.split(",") if heavy else [],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    out = {
        "repo": str(args.repo),
        "load_before": os.getloadavg(),
        "runs": [measure(args.repo, a, args.repeat) for a in (["--help"], ["sql", "--help"])],
        "load_after": os.getloadavg(),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
