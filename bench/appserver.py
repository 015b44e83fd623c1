"""A DP Explorer app server for benchmarks: `streamlit run app.py` on a free localhost port,
with a throwaway release registry (DPX_REGISTRY) and owner mode, stopped afterwards.

    with streamlit_server() as server:
        server.url, server.pid
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Server:
    url: str
    pid: int

    @property
    def host_port(self) -> str:
        return self.url.removeprefix("http://")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            raise SystemExit(f"streamlit did not start:\n{log.read().decode()[-2000:]}")
        time.sleep(0.3)


@contextlib.contextmanager
def streamlit_server(extra_env: dict[str, str] | None = None):
    """Start the app (owner mode, a temporary registry); yield its `Server`; stop it."""
    port = _free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
        "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]  # fmt: skip
    registry = tempfile.mkdtemp(prefix="dpx-bench-registry-")
    env = {**os.environ, "DPX_REGISTRY": registry, **(extra_env or {})}
    env.pop("DPX_MODE", None)  # owner mode: the demo tables and every action are available
    try:
        with tempfile.TemporaryFile() as log:
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
            url = f"http://127.0.0.1:{port}"
            try:
                _wait_healthy(url, proc, log)
                yield Server(url, proc.pid)
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
    finally:
        shutil.rmtree(registry, ignore_errors=True)
