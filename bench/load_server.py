"""The app server under load, without browsers (issue 29): N sessions press a page's main action
at once; p50/p95 latency per action and the server's peak RSS, as JSON.

Sixteen browsers starve two cores by themselves, so this driver speaks Streamlit's own protocol:
each session is a websocket client of `/_stcore/stream` (the frames are Streamlit's protobuf
`BackMsg`/`ForwardMsg`). A session opens the page (a rerun with no widget state), reads the
elements the server sends to find the action button's widget id, waits until the page is idle,
then — all N sessions together, behind a barrier — sends the rerun a click sends (the button's
trigger value) and stops the clock when the result's marker text arrives (the same markers a
person waits for: "Charged releases", "Partitions released", "Published CSV") and the run has
finished. The server's RSS (its process and children, from /proc) is sampled every 0.1 s.
Rounds repeat until each (action, N) has at least `--samples` timings (N = 1: eight rounds), so
the N = 1 baseline is a median, not one click.

Actions, each on the page's default demo data in secure mode (the app's default):
- location: "Build releases" (Recommended on the 100k-point demo);
- sql: "Run query" (the default example);
- pp: "Publish (perturb)" (the demo table).

    .venv/bin/python bench/load_server.py [--sessions 1 4 16] [--only location] [--slots K] [--samples 8]

Not a test: no assertions on time. Targets (issue 29): p95 at N = 16 within 10 x p50 at N = 1
for every action, server RSS within 1.5 GB, no error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.appserver import streamlit_server  # noqa: E402

FINISHED = ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY
ACTION_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Action:
    name: str
    page: str  # the page's URL path name
    button_key: str  # the `key=` of its main button
    marker: str  # text that is on screen once the result is


ACTIONS = {
    "location": Action("location", "location_histograms", "lh_run", "Charged releases"),
    "sql": Action("sql", "dp_sql", "dpsql_run", "Partitions released"),
    "pp": Action("pp", "pp_balancing", "pp_publish", "Published CSV"),
}


def _rerun(page: str, widgets: list | None = None) -> bytes:
    msg = BackMsg()
    msg.rerun_script.page_name = page
    msg.rerun_script.query_string = ""
    for widget in widgets or []:
        msg.rerun_script.widget_states.widgets.append(widget)
    return msg.SerializeToString()


def _button_ids(msg: ForwardMsg) -> list[str]:
    """Widget ids of the buttons a delta message adds (a release button may be a plain or a
    form-less `st.button`)."""
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return []
    element = msg.delta.new_element
    kind = element.WhichOneof("type")
    if kind == "button":
        return [element.button.id]
    return []


class Session:
    """One browser session of the app, spoken to over its websocket."""

    def __init__(self, ws, action: Action):
        self.ws, self.action = ws, action
        self.buttons: list[str] = []

    async def _until_finished(self, marker: str | None) -> bool:
        """Read messages until a run finishes successfully (and, with a marker, until the marker
        was seen in that run or before); True when the marker was seen."""
        seen = marker is None
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), ACTION_TIMEOUT_S)
            if isinstance(raw, str):
                continue
            if not seen and marker.encode() in raw:
                seen = True
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            self.buttons.extend(_button_ids(msg))
            finished = msg.WhichOneof("type") == "script_finished"
            if finished and msg.script_finished == FINISHED and seen:
                return True

    async def open(self) -> None:
        await self.ws.send(_rerun(self.action.page))
        await self._until_finished(None)
        await self._settle()

    async def _settle(self) -> None:
        """Wait until the server has been quiet for 1 s (a page may rerun itself once)."""
        while True:
            try:
                raw = await asyncio.wait_for(self.ws.recv(), 1.0)
            except TimeoutError:
                return
            if isinstance(raw, bytes):
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                self.buttons.extend(_button_ids(msg))

    def button_id(self) -> str:
        key = self.action.button_key
        found = [i for i in self.buttons if i.endswith(key)]
        if not found:
            raise RuntimeError(f"no button with key {key!r} on {self.action.page}")
        return found[-1]

    async def press(self) -> float:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        widget = WidgetState(id=self.button_id(), trigger_value=True)
        start = time.perf_counter()
        await self.ws.send(_rerun(self.action.page, [widget]))
        await self._until_finished(self.action.marker)
        return time.perf_counter() - start


async def _one(url: str, action: Action, ready: asyncio.Barrier) -> float:
    ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
    async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None) as ws:
        session = Session(ws, action)
        await session.open()
        await ready.wait()
        return await session.press()


class RssSampler:
    """The peak resident memory of a process and its children, sampled every 0.1 s."""

    def __init__(self, pid: int):
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _pids(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            try:
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                children = []
            todo.extend(int(c) for c in children)
        return pids

    def current(self) -> int:
        total = 0
        for pid in self._pids():
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
            except OSError:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, self.current())

    def __enter__(self):
        self.peak = self.current()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


async def _round(url: str, action: Action, n: int) -> tuple[list[float], list[str]]:
    ready = asyncio.Barrier(n)
    outcomes = await asyncio.gather(
        *(_one(url, action, ready) for _ in range(n)), return_exceptions=True
    )
    times = [o for o in outcomes if isinstance(o, float)]
    errors = [f"{type(o).__name__}: {o}" for o in outcomes if not isinstance(o, float)]
    return times, errors


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--only", choices=sorted(ACTIONS), nargs="+", default=sorted(ACTIONS))
    parser.add_argument("--slots", type=int, default=None, help="DPX_ACTION_SLOTS for the server")
    parser.add_argument(
        "--samples", type=int, default=8,
        help="at least this many timings per (action, N): small N repeats its round",
    )  # fmt: skip
    args = parser.parse_args()
    extra = {} if args.slots is None else {"DPX_ACTION_SLOTS": str(args.slots)}
    load_start = [round(x, 2) for x in os.getloadavg()]
    results, errors = [], []
    with streamlit_server(extra) as server:
        sampler = RssSampler(server.pid)
        with sampler:
            idle_rss = sampler.current()
            for name in args.only:
                action = ACTIONS[name]
                asyncio.run(_round(server.url, action, 1))  # warm: caches and imports
                for n in args.sessions:
                    sampler.peak = sampler.current()
                    times, errs = [], []
                    for _ in range(max(1, -(-args.samples // n))):  # rounds of n sessions
                        t, e = asyncio.run(_round(server.url, action, n))
                        times.extend(t)
                        errs.extend(e)
                    errors.extend(f"{name} N={n}: {e}" for e in errs)
                    results.append(
                        {
                            "action": name,
                            "sessions": n,
                            "p50_s": _quantile(times, 0.5),
                            "p95_s": _quantile(times, 0.95),
                            "mean_s": round(statistics.fmean(times), 3) if times else None,
                            "rounds": max(1, -(-args.samples // n)),
                            "completed": len(times),
                            "peak_rss_mb": round(sampler.peak / 2**20),
                        }
                    )
                    print(json.dumps(results[-1]), file=sys.stderr)
        peak = sampler.peak
    print(
        json.dumps(
            {
                "benchmark": "load_server",
                "what": "seconds from N simultaneous clicks to each session's rendered result; "
                "server RSS (process and children)",
                "mode": "secure (the app's default), owner, demo data",
                "action_slots": args.slots or "default (CPUs, 1 to 4)",
                "idle_rss_mb": round(idle_rss / 2**20),
                "peak_rss_mb_last_round": round(peak / 2**20),
                "results": results,
                "errors": errors,
                "machine": {
                    "cpus": os.cpu_count(),
                    "load_average_at_start": load_start,
                    "load_average_1_5_15_min_at_end": [round(x, 2) for x in os.getloadavg()],
                    "python": platform.python_version(),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
