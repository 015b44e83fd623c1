"""Browser fixtures: `streamlit run app.py` on a free localhost port, driven by Playwright
through Debian's Chromium. Every request that would leave localhost is aborted and counted.

Screenshots: tests write them with the `screenshot` fixture into a temporary directory, so a
test run never modifies tracked files. `make screenshots` sets DPX_SCREENSHOT_DIR=docs/screenshots
to refresh the README's images on purpose.

Helpers for pages (`assert_no_exception`, `SMALL_UPLOAD_MB` with the `small_upload_app_url`
fixture) are shared by every page's browser tests.
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
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("DPX_CHROMIUM", "/usr/bin/chromium")
LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}

# How long a locator waits for the page (ms): generous, because CI runs the whole suite on two
# loaded cores and a noisy draw can take tens of seconds there; a broken page still fails.
WAIT_MS = 90_000
expect.set_options(timeout=WAIT_MS)  # `expect(...)` retries as long as a locator waits
SCREENSHOT_ENV = "DPX_SCREENSHOT_DIR"
SMALL_UPLOAD_MB = 1  # server.maxUploadSize of the `small_upload_app_url` server


def _chromium_or_skip() -> str:
    path = CHROMIUM if os.path.isfile(CHROMIUM) else shutil.which("chromium")
    if not path:
        msg = f"BROWSER TESTS SKIPPED: no Chromium at {CHROMIUM} (install Debian's 'chromium' package)"
        print(f"\n!!! {msg} !!!", file=sys.stderr)
        pytest.skip(msg)
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    """`streamlit run app.py` on a chosen port, which a test may kill (-9) and start again on
    the same port (a server restart in the middle of a build)."""

    def __init__(self, port: int | None = None, env: dict | None = None):
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = env
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - open for the server's life

    def start(self) -> AppServer:
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", "app.py",
                "--server.port", str(self.port), "--server.address", "127.0.0.1",
                "--server.headless", "true", "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none",
            ],
            cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=self.env,
        )  # fmt: skip
        _wait_healthy(self.url, self.proc, self._log)
        return self

    def kill9(self) -> None:
        """SIGKILL: no cleanup, as a crash or an out-of-memory kill."""
        self.proc.kill()
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._log.close()


@contextlib.contextmanager
def serve_app(*extra_args: str):
    """Run `streamlit run app.py` on a free 127.0.0.1 port; yields the base URL.

    `extra_args` are more `streamlit run` options, e.g. ("--server.maxUploadSize", "1").
    """
    port = _free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", "app.py",
                "--server.port", str(port), "--server.address", "127.0.0.1",
                "--server.headless", "true", "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none", *extra_args,
            ],
            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc, log)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="session")
def app_url():
    """Base URL of `streamlit run app.py` shared by the session's browser tests."""
    with serve_app() as url:
        yield url


@pytest.fixture
def fresh_app_url():
    """Base URL of a server no browser has visited yet (for first-visit behaviour)."""
    with serve_app() as url:
        yield url


@pytest.fixture(scope="session")
def small_upload_app_url():
    """A server whose upload limit is SMALL_UPLOAD_MB, for "file over the upload limit" tests."""
    with serve_app("--server.maxUploadSize", str(SMALL_UPLOAD_MB)) as url:
        yield url


@pytest.fixture(scope="session")
def screenshot_dir(tmp_path_factory) -> Path:
    """Where screenshots go: a temporary directory, or $DPX_SCREENSHOT_DIR (`make screenshots`)."""
    target = os.environ.get(SCREENSHOT_ENV)
    if target:
        path = (ROOT / target).resolve()
        path.mkdir(parents=True, exist_ok=True)
        return path
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture
def screenshot(screenshot_dir):
    """`screenshot(page, "home.png")` -> the written file's Path (full page)."""

    def take(pg, name: str) -> Path:
        out = screenshot_dir / name
        pg.screenshot(path=str(out), full_page=True)
        return out

    return take


def assert_no_exception(pg) -> None:
    """Fail if Streamlit shows an exception box (a traceback) anywhere on the page."""
    boxes = pg.get_by_test_id("stException")
    assert boxes.count() == 0, boxes.first.inner_text()[:2000]


def _wait_healthy(url: str, proc: subprocess.Popen, log) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            pytest.fail(f"streamlit did not start:\n{log.read().decode(errors='replace')[-3000:]}")
        time.sleep(0.3)


@pytest.fixture(scope="session")
def browser():
    executable = _chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=executable,
            headless=True,
            args=[
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync",
            ],
        )  # fmt: skip
        yield b
        b.close()


@pytest.fixture
def external_requests() -> list[str]:
    """URLs the page tried to fetch outside localhost (all of them were aborted)."""
    return []


@pytest.fixture
def page(browser, external_requests):
    """A fresh page in its own context; requests that would leave localhost are aborted."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})

    def guard(route):
        host = urlparse(route.request.url).hostname or ""
        if route.request.url.startswith(("data:", "blob:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            external_requests.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    pg = context.new_page()
    pg.set_default_timeout(WAIT_MS)
    yield pg
    context.close()


@pytest.fixture
def no_exception():
    """The `assert_no_exception(page)` check as a fixture (test modules cannot import conftest)."""
    return assert_no_exception


def bad_upload_cases(header: bytes, row: bytes) -> list:
    """The bad files every page must refuse, as `(name, payload, message)` parameters: a binary
    renamed `.csv`, an empty file, and a well-formed file over the 1 MB upload limit that the
    `small_upload_app_url` server sets (`header` + `row` repeated past 1.2 MB)."""
    return [
        ("binary.csv", b"\x89PNG\r\n\x1a\n" + os.urandom(4000), "looks binary"),
        ("empty.csv", b"", "empty"),
        ("huge.csv", header + row * (1_200_000 // len(row) + 1), "1.0MB or smaller"),
    ]


def upload_bad_file(page, source: str, name: str, payload: bytes, message: str) -> None:
    """Choose the page's upload source (the radio labelled `source`), upload the file and wait
    for the page's message about it."""
    page.get_by_text(source).click()
    file_input = page.locator("input[type='file']")
    file_input.wait_for(state="attached")
    file_input.set_input_files(files=[{"name": name, "mimeType": "text/csv", "buffer": payload}])
    page.get_by_text(message).first.wait_for()


@contextlib.contextmanager
def two_sessions(browser):
    """Two students at once: two fresh browser contexts (two Streamlit sessions), one page each,
    closed afterwards."""
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    try:
        pages = [c.new_page() for c in contexts]
        for pg in pages:
            pg.set_default_timeout(WAIT_MS)
        yield pages
    finally:
        for c in contexts:
            c.close()


def in_one_screen(page, top: str, below: list[str]) -> dict:
    """Scroll the element `top` (a CSS selector) to the top of the window, under Streamlit's
    header, and measure: `fits` is True when it and every element of `below` are inside the
    viewport at once (the boxes are returned for the failure message)."""
    return page.evaluate(
        """([top, below]) => {
          const first = document.querySelector(top);
          const header = document.querySelector('[data-testid="stHeader"]');
          const under = header ? header.getBoundingClientRect().bottom : 0;
          first.scrollIntoView({block: "start"});
          let scroller = first.parentElement;  // the element that scrolls the page
          while (scroller && !(scroller.scrollHeight > scroller.clientHeight
                 && /(auto|scroll)/.test(getComputedStyle(scroller).overflowY))) {
            scroller = scroller.parentElement;
          }
          (scroller || document.scrollingElement).scrollBy(0, -under - 4);
          const box = e => { const r = e.getBoundingClientRect();
                             return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
          const boxes = {[top]: box(first)};
          for (const s of below) { const e = document.querySelector(s); boxes[s] = e ? box(e) : null; }
          const h = window.innerHeight, w = window.innerWidth;
          const fits = Object.values(boxes).every(b => b && b.top >= under - 1 && b.bottom <= h + 1
                                                         && b.left >= 0 && b.right <= w + 1);
          return {fits, under, height: h, boxes};
        }""",
        [top, below],
    )


def toolbar_over_titles(page, chart: str) -> list[str]:
    """Hover the Plotly chart inside `chart` (a CSS selector) so its toolbar shows, and return
    the titles (chart title, legend entries) the toolbar's box overlaps (empty: none)."""
    plot = page.locator(f"{chart} .js-plotly-plot").first
    plot.hover()
    page.wait_for_timeout(300)
    return plot.evaluate(
        """el => {
          const bar = el.querySelector('.modebar');
          if (!bar) return [];
          const m = bar.getBoundingClientRect();
          if (m.width === 0 || getComputedStyle(bar).opacity === '0') return [];
          const out = [];
          el.querySelectorAll('.gtitle, .legendtext, .annotation-text').forEach(t => {
            const r = t.getBoundingClientRect();
            const w = Math.min(r.right, m.right) - Math.max(r.left, m.left);
            const h = Math.min(r.bottom, m.bottom) - Math.max(r.top, m.top);
            if (w > 1 && h > 1) out.push(t.textContent);
          });
          return out;
        }"""
    )
