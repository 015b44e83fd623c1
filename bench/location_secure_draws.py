"""Issue 30: CPU seconds of `dpx release --method auto` secure vs seeded, before vs after a change
(whole processes, interleaved), plus the secure draws per mechanism. Prints one JSON object.

CPU seconds (user + system, all threads, from /usr/bin/time) rather than wall time: the machine
is shared, and the secure sampler runs on a thread per core. Each round runs before-secure,
after-secure, before-seeded, after-seeded in turn. The data are bench/scale_location.py's
clustered points (generated in --dir, never in the repository). Not a test.

    .venv/bin/python bench/location_secure_draws.py --before DIR [--rows 10000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_location import BBOX, make_points  # noqa: E402
from scale_run import ROOT, dpx_argv  # noqa: E402

COUNT = """
import collections, json, sys
import numpy as np
from core.privacy import noise as N
from core.privacy.accountant import DRAWING
draws = collections.Counter()
def wrap(name):
    f = getattr(N.Noise, name)
    def g(self, scale, size=None):
        m = DRAWING.get(None)
        draws[f"{name}: {m.label if m else '?'}"] += 1 if size is None else int(np.prod(size))
        return f(self, scale, size)
    return g
for name in ("laplace", "discrete_laplace", "discrete_gaussian"):
    setattr(N.Noise, name, wrap(name))
from core.cli import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()) as out:
    main(sys.argv[1:])
print("DRAWS " + json.dumps({"method": json.loads(out.getvalue()).get("method"), "draws": dict(draws)}))
"""


def cpu_run(argv: list[str], env: dict) -> dict:
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%U %S %e", "-o", tf.name, *argv],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        user, sys_, wall = (float(v) for v in Path(tf.name).read_text().split()[-3:])
    if proc.returncode:
        sys.stderr.write(proc.stderr[-2000:])
    return {"cpu_s": round(user + sys_, 2), "wall_s": wall, "exit": proc.returncode,
            "load_before": round(os.getloadavg()[0], 2)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="checkout (source tree) before")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/dpx-scale"))
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    path = make_points(a.rows, a.dir)
    args = ["release", str(path), "--method", "auto", "--epsilon", "1",
            f"--bbox={','.join(map(str, BBOX))}", "--lat", "lat", "--lon", "lon", "--json"]  # fmt: skip
    trees = {"before": a.before.resolve(), "after": ROOT}
    commands = {}
    for label, tree in trees.items():
        argv, env = dpx_argv(tree)
        env = {**env, "DPX_REGISTRY": str(a.dir / f"registry-{label}")}
        commands[f"{label}_secure"] = ([*argv, *args], env)
        commands[f"{label}_seeded"] = ([*argv, *args, "--seed", "7"], env)
    runs = collections.defaultdict(list)
    order = ["before_secure", "after_secure", "before_seeded", "after_seeded"]
    for _ in range(a.repeats):
        for name in order:
            runs[name].append(cpu_run(*commands[name]))
            print(name, runs[name][-1], file=sys.stderr, flush=True)
    med = {k: statistics.median(r["cpu_s"] for r in v) for k, v in runs.items()}
    draws = {}
    for label, tree in trees.items():
        env = {**os.environ, "PYTHONPATH": str(tree), "DPX_REGISTRY": str(a.dir / "registry-n")}
        # cwd: `python -c` puts it first on sys.path, so the tree's own `core` is imported
        out = subprocess.run([sys.executable, "-c", COUNT, *args], env=env, capture_output=True,
                             text=True, check=True, cwd=tree)  # fmt: skip
        # DuckDB's progress bar may share the line: read from the marker on
        line = out.stdout[out.stdout.rindex("DRAWS ") + 6 :].splitlines()[0]
        draws[label] = json.loads(line)
    print(json.dumps({
        "benchmark": "dpx release --method auto --epsilon 1 --json, grid 1024: CPU s (user+sys)",
        "rows": a.rows, "repeats": a.repeats, "cpus": os.cpu_count(),
        "median_cpu_s": med,
        "secure_over_seeded": {k: round(med[f"{k}_secure"] / med[f"{k}_seeded"], 2)
                               for k in trees},
        "secure_draws": draws, "runs": runs,
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
