"""Many people on one app server: N browser sessions running the default DP SQL example.

For each N in --sessions (default 1, 4, 8, 16) a fresh `streamlit run app.py` starts on a free
localhost port (owner mode, a temporary release registry), and N headless Chromium sessions
(one browser, N contexts — each context is its own Streamlit session) open the DP SQL page at
the same time; once all are on the page, each presses "Run query" --runs times, back to back. One session
opens the page first (warm-up, not timed), as on a server that is already in use. The
browsers run on the same machine as the server. Measured per N:

- click-to-result: from the click until the rerun has finished and the result is drawn (a
  MutationObserver sees the page's elements go stale when the rerun starts; the run has ended
  when none is stale any more and "Partitions released" is shown) — p50 and p95 over every
  run of every session;
- page open: from navigation to the page's "Run query" button (p50, p95);
- peak server RSS: the streamlit process and its children, sampled every 0.2 s;
- CPU seconds used by the server and by the browsers (they share the machine) over the level.

The target (issue 19): at 16 sessions the server stays under 3 GB and the p95 click-to-result
stays within 16x the single-session p50 (queueing in the execution pool, not thrashing).
Secure noise (the app's default). No request leaves localhost. Prints JSON; --out writes it too.

    .venv/bin/python bench/dpsql_sessions.py [--sessions 1 4 8 16] [--runs 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.appserver import streamlit_server  # noqa: E402

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


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children", encoding="ascii") as f:
                todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds used by `pid` and its descendants (live ones, and those they reaped)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in _descendants(pid):
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        except (OSError, ValueError, IndexError):
            continue
    return total / ticks


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


async def session(browser, url: str, runs: int, blocked: list[str], ready) -> dict:
    """One browser session: open the DP SQL page, wait until every session has (the class is
    on the page), then press Run `runs` times."""
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
        button = page.get_by_role("button", name="Run query")
        failed = page.get_by_test_id("stException")
        await page.get_by_role("tab", name="Run").or_(failed).first.wait_for()
        if await failed.count():
            raise RuntimeError("the page showed an exception while opening")
        await page.get_by_role("tab", name="Run").click()
        await button.wait_for()
        out["open_s"] = time.perf_counter() - t0
        await page.evaluate(STALE_WATCH)
        await ready.arrive()
        for _ in range(runs):
            await page.evaluate("() => { window.__dpxStale = false; }")
            t0 = time.perf_counter()
            await button.click()
            await page.wait_for_function(RUN_DONE, polling=20)
            out["runs_s"].append(time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001 - reported in the JSON, never hidden
        ready.leave()
        try:  # what the session saw, for the report
            seen = await page.evaluate("() => document.body.innerText.slice(-300)")
        except Exception:  # noqa: BLE001
            seen = "?"
        out["error"] = (
            f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]} | page ends with: "
            + " ".join(seen.split())
        )
    finally:
        await context.close()
    return out


async def warm_up(browser, url: str) -> None:
    """Open the DP SQL page once, so the server has imported the app before the sessions come
    (the first sessions of a cold server otherwise race the imports: see the README)."""
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    await page.goto(f"{url}/dp_sql")
    await (
        page.get_by_role("button", name="Run query")
        .or_(page.get_by_role("tab", name="Run"))
        .first.wait_for()
    )
    await context.close()


class Barrier:
    """Every session waits here until all have opened the page (or failed)."""

    def __init__(self, n: int):
        self.n, self.count, self.event = n, 0, asyncio.Event()

    async def arrive(self) -> None:
        self.count += 1
        if self.count >= self.n:
            self.event.set()
        await self.event.wait()

    def leave(self) -> None:
        if not self.event.is_set():
            self.n -= 1
            if self.count >= self.n:
                self.event.set()


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 3)


async def level(n: int, runs: int) -> dict:
    from playwright.async_api import async_playwright

    blocked: list[str] = []
    with streamlit_server() as server:
        url, pid = server.url, server.pid
        sampler = RssSampler(pid)
        sampler.start()
        idle_rss = round(_tree_rss_mb(pid), 1)
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(
                executable_path=CHROMIUM, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
            )  # fmt: skip
            await warm_up(browser, url)  # a server many people use has its modules loaded
            t0 = time.perf_counter()
            cpu0_server, cpu0_all = _tree_cpu_s(pid), _tree_cpu_s(os.getpid())
            ready = Barrier(n)
            sessions = await asyncio.gather(
                *(session(browser, url, runs, blocked, ready) for _ in range(n))
            )
            wall = time.perf_counter() - t0
            server_cpu = _tree_cpu_s(pid) - cpu0_server
            clients_cpu = _tree_cpu_s(os.getpid()) - cpu0_all - server_cpu
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
        "server_cpu_s": round(server_cpu, 1),
        "browsers_and_driver_cpu_s": round(clients_cpu, 1),
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
