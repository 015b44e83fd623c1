"""Many people on one app server: N browser sessions running the default DP SQL example.

For each N in --sessions (default 1, 4, 8, 16) a fresh `streamlit run app.py` starts on a free
localhost port (owner mode, a temporary release registry), and N headless Chromium sessions
(one browser, N contexts — each context is its own Streamlit session) open the DP SQL page at
the same time and press "Run query" --runs times each. Measured per N:

- click-to-result: from the click until the rerun has finished and the result is drawn (a
  MutationObserver sees the page's elements go stale when the rerun starts; the run has ended
  when none is stale any more and "Partitions released" is shown) — p50 and p95 over every
  run of every session;
- page open: from navigation to the page's "Run query" button (p50, p95);
- peak server RSS: the streamlit process and its children, sampled every 0.2 s.

The target (issue 19): at 16 sessions the server stays under 3 GB and the p95 click-to-result
stays within 16x the single-session p50 (queueing in the execution pool, not thrashing).
Secure noise (the app's default). No request leaves localhost. Prints JSON; --out writes it too.

    .venv/bin/python bench/dpsql_sessions.py [--sessions 1 4 8 16] [--runs 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("DPX_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = int(os.environ.get("DPX_BENCH_TIMEOUT_MS", 900_000))
RSS_LIMIT_MB = 3 * 1024
STALE_WATCH = """() => {
  window.__dpxStale = false;
  new MutationObserver(() => {
    if (document.querySelector('[data-stale="true"]')) window.__dpxStale = true;
  }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ['data-stale'],
                             childList: true});
}"""
RUN_DONE = """() => window.__dpxStale === true
  && document.querySelectorAll('[data-stale="true"]').length === 0
  && document.body.innerText.includes('Partitions released')"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree_rss_mb(pid: int) -> float:
    """RSS of `pid` and all its descendants, from /proc (MB)."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children", encoding="ascii") as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return total / 1024


class RssSampler(threading.Thread):
    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak, self._done = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, _tree_rss_mb(self.pid))
            self._done.wait(0.2)

    def stop(self) -> float:
        self._done.set()
        self.join()
        return round(self.peak, 1)


@contextlib.contextmanager
def streamlit_server():
    port = _free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
        "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    env = {**os.environ, "DPX_REGISTRY": tempfile.mkdtemp(prefix="dpx-bench-registry-")}
    env.pop("DPX_MODE", None)  # owner mode, as in the measurement
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(f"streamlit did not start:\n{log.read().decode()[-2000:]}")
                time.sleep(0.3)
            yield url, proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()


async def session(browser, url: str, runs: int, blocked: list[str]) -> dict:
    """One browser session: open the DP SQL page, press Run `runs` times."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})

    async def guard(route):
        request_url = route.request.url
        host = urlparse(request_url).hostname or ""
        if request_url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
            await route.continue_()
        else:
            blocked.append(request_url)
            await route.abort()

    await context.route("**/*", guard)
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    out: dict = {"open_s": None, "runs_s": [], "error": None}
    try:
        t0 = time.perf_counter()
        await page.goto(f"{url}/dp_sql")
        await page.get_by_role("heading", name="DP SQL").first.wait_for()
        await page.get_by_role("tab", name="Run").click()
        button = page.get_by_role("button", name="Run query")
        await button.wait_for()
        out["open_s"] = time.perf_counter() - t0
        await page.evaluate(STALE_WATCH)
        for _ in range(runs):
            await page.evaluate("() => { window.__dpxStale = false; }")
            t0 = time.perf_counter()
            await button.click()
            await page.wait_for_function(RUN_DONE, polling=20)
            out["runs_s"].append(time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001 - reported in the JSON, never hidden
        out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    finally:
        await context.close()
    return out


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 3)


async def level(n: int, runs: int) -> dict:
    from playwright.async_api import async_playwright

    blocked: list[str] = []
    with streamlit_server() as (url, pid):
        sampler = RssSampler(pid)
        sampler.start()
        idle_rss = round(_tree_rss_mb(pid), 1)
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=CHROMIUM, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
            )  # fmt: skip
            t0 = time.perf_counter()
            sessions = await asyncio.gather(
                *(session(browser, url, runs, blocked) for _ in range(n))
            )
            wall = time.perf_counter() - t0
            await browser.close()
        peak = sampler.stop()
    clicks = [s for one in sessions for s in one["runs_s"]]
    opens = [one["open_s"] for one in sessions if one["open_s"] is not None]
    return {
        "sessions": n,
        "runs_per_session": runs,
        "completed_runs": len(clicks),
        "click_to_result_p50_s": _pct(clicks, 0.5),
        "click_to_result_p95_s": _pct(clicks, 0.95),
        "click_to_result_max_s": round(max(clicks), 3) if clicks else None,
        "page_open_p50_s": _pct(opens, 0.5),
        "page_open_p95_s": _pct(opens, 0.95),
        "peak_server_rss_mb": peak,
        "idle_server_rss_mb": idle_rss,
        "wall_s": round(wall, 1),
        "errors": [one["error"] for one in sessions if one["error"]],
        "requests_blocked_outside_localhost": len(blocked),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1, 4, 8, 16])
    ap.add_argument("--runs", type=int, default=5, help="Run clicks per session")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    args = ap.parse_args()
    from core.dpsql.execute.pool import POOL

    load_start = [round(x, 2) for x in os.getloadavg()]
    levels = []
    for n in args.sessions:
        print(f"[dpsql_sessions] {n} session(s) x {args.runs} runs", file=sys.stderr)
        levels.append(asyncio.run(level(n, args.runs)))
        print(json.dumps(levels[-1]), file=sys.stderr)
    single = next((lv for lv in levels if lv["sessions"] == 1), None)
    top = max(levels, key=lambda lv: lv["sessions"])
    target = None
    if single and single["click_to_result_p50_s"] and top["click_to_result_p95_s"]:
        ratio = top["click_to_result_p95_s"] / single["click_to_result_p50_s"]
        target = {
            "sessions": top["sessions"],
            "peak_server_rss_mb": top["peak_server_rss_mb"],
            "rss_under_3_gb": top["peak_server_rss_mb"] < RSS_LIMIT_MB,
            "p95_over_single_p50": round(ratio, 2),
            "p95_within_16x_single_p50": ratio <= 16,
        }
    out = {
        "benchmark": "dpsql_sessions",
        "what": "N browser sessions running the default DP SQL example on one app server",
        "mode": "secure noise, owner mode, default demo (Employee/Orders)",
        "pool": {
            "slots": POOL.slots,
            "memory_total": POOL.memory,
            "memory_per_slot": POOL.memory_per_slot,
        },  # fmt: skip
        "levels": levels,
        "target": target,
        "machine": {
            "load_average_at_start": load_start,
            "load_average_1_5_15_min_at_end": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }
    text = json.dumps(out, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
