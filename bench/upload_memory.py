"""Peak memory of the app process for one large CSV upload on the DP SQL page (issue 29 item 2).

Method: one fresh Python process per measurement drives `pages/dp_sql.py` with Streamlit's
AppTest (the real page code, in-process): upload the CSV, name the privacy unit (column
`rider`), let the page build its catalogue and query, and (with --run) press "Run query" (the
DuckDB engine loads the table and runs the staged query). Peak RSS is the kernel's high-water
mark (`VmHWM` in /proc/self/status), read after each step. The test process itself holds one
copy of the file's bytes (the value given to the uploader, as Streamlit's upload manager
does in a real server), counted in the numbers.

    python bench/upload_memory.py [--mib 199] [--code DIR] [--run] [--second]

`--second`: then a second session uploads the same file and reaches its query (is the table
shared or copied per session?). `--code DIR` measures another checkout (e.g. the code before
this change). Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_csv(path: Path, mib: float) -> Path:
    """A CSV of about `mib` MiB: rider (text id, 200k riders), zone (text, 12 values), fare
    (small integer), amount (2 decimals). Deterministic."""
    target = int(mib * 1024 * 1024)
    if path.exists() and abs(path.stat().st_size - target) < 1024 * 1024:
        return path
    import numpy as np

    rng = np.random.default_rng(0)
    with path.open("w") as fh:
        fh.write("rider,zone,fare,amount\n")
        written = 0
        while written < target:
            n = 200_000
            rider = rng.integers(0, 200_000, n)
            zone = rng.integers(0, 12, n)
            fare = rng.integers(0, 60, n)
            amount = rng.integers(0, 100_000, n) / 100
            rows = zip(rider, zone, fare, amount, strict=True)
            block = "".join(f"r{r},z{z},{f},{a:.2f}\n" for r, z, f, a in rows)
            if written + len(block) > target:
                block = block[: target - written]
                block = block[: block.rfind("\n") + 1]
            fh.write(block)
            written += len(block)
            if len(block) == 0:
                break
    return path


CHILD = textwrap.dedent(
    """
    import json, os, sys, tempfile
    def hwm():
        s = open("/proc/self/status").read()
        get = lambda k: int(next(l for l in s.splitlines() if l.startswith(k)).split()[1]) // 1024
        return {"peak_rss_mib": get("VmHWM:"), "rss_mib": get("VmRSS:")}
    os.environ["DPX_REGISTRY"] = tempfile.mkdtemp(prefix="dpx-bench-registry-")
    from streamlit.testing.v1 import AppTest
    out = {}
    at = AppTest.from_file("pages/dp_sql.py", default_timeout=900).run()
    out["page_on_demo"] = hwm()
    data = open(sys.argv[1], "rb").read()
    out["bytes_read_by_test"] = hwm()
    at.radio(key="dpsql_source").set_value("Upload CSV/Parquet").run()
    at.file_uploader(key="dpsql_upload").set_value([("trips.csv", data, "text/csv")]).run()
    assert not at.exception, at.exception
    out["uploaded_table_loaded"] = hwm()  # the page stops at "what is the privacy unit?"
    next(r for r in at.radio if r.label == "What is the privacy unit?").set_value(
        "A column says whose data each row is").run()
    next(s for s in at.selectbox if (s.key or "").startswith("dpsql_uid_")).set_value("rider")
    at.run()
    assert not at.exception, at.exception
    out["upload_unit_query_ready"] = hwm()
    if sys.argv[2] == "run":
        at.button(key="dpsql_run").click().run()
        assert not at.exception, at.exception
        out["after_run_query"] = hwm()
    if len(sys.argv) > 3:  # a second session uploads the same file and reaches the query
        two = AppTest.from_file("pages/dp_sql.py", default_timeout=900).run()
        two.radio(key="dpsql_source").set_value("Upload CSV/Parquet").run()
        two.file_uploader(key="dpsql_upload").set_value([("t2.csv", data, "text/csv")]).run()
        next(r for r in two.radio if r.label == "What is the privacy unit?").set_value(
            "A column says whose data each row is").run()
        next(s for s in two.selectbox if (s.key or "").startswith("dpsql_uid_")).set_value("rider")
        two.run()
        assert not two.exception, two.exception
        out["second_session_same_file_ready"] = hwm()
    errors = [e.value for e in at.error if "NON-PRIVATE" not in e.value]
    out["errors"] = errors[:2]
    print(json.dumps(out))
    """
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=float, default=199.0)
    ap.add_argument("--code", type=Path, default=ROOT)
    ap.add_argument("--run", action="store_true", help="also press Run query")
    ap.add_argument("--second", action="store_true", help="then a second session, same file")
    default_csv = Path(tempfile.gettempdir()) / "dpx-bench-upload.csv"
    ap.add_argument("--csv", type=Path, default=default_csv)
    args = ap.parse_args()
    csv = make_csv(args.csv, args.mib)
    env = {k: v for k, v in os.environ.items() if k != "DPX_MODE"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(csv), "run" if args.run else "ready",
         *(["second"] if args.second else [])],
        cwd=args.code, env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:])
    result = json.loads(done.stdout.strip().splitlines()[-1])
    size = csv.stat().st_size
    result.update(
        file_mib=round(size / 2**20, 1),
        code=str(args.code),
        method="AppTest on pages/dp_sql.py in a fresh process; VmHWM after each step",
    )
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
