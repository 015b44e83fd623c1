"""App latency in a real browser: time from the click on a page's main action to its rendered result.

Prints one JSON object. Starts `streamlit run app.py` on a free localhost port and drives it with
Playwright through Debian's Chromium (no network: every non-localhost request is aborted). Each
case runs `--repeats` times, each in a fresh browser context (a new session, so nothing is reused
from an earlier run's session state); the clock starts at the click and stops when the result is
on screen:

- location histograms, default demo (100k points) — "Build releases" (one charged release per
  default method: Recommended alone since issue 16.5) until the map (a drawn canvas in the st_folium iframe), "Charged releases" and
  "Downloads" are on screen; then, in the same session, "Evaluate" (owner only: MRE of the
  releases plus 3 evaluation rebuilds per method) until the MRE chart and its cost are drawn;
- location histograms, a 200,000-point upload (generated here: a seeded synthetic "country" of
  Gaussian cities over the continental US, region preset "Continental United States"): upload
  until the Build button is ready, then "Build releases" as above;
- DP SQL, the default example — "Run query" until "Partitions released" is shown;
- PP balancing, the default demo — "Publish (perturb)" until the "Published CSV" download shows.

Secure mode (the app's default) throughout; the server's release registry is a temporary
directory (DPX_REGISTRY), never ~/.dpx. The machine's load average is reported with the
numbers. Not a test: no wall-clock assertions.

    .venv/bin/python bench/app_latency.py [--repeats 3] [--points 200000] [--only location]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.appserver import streamlit_server  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("DPX_CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = int(os.environ.get("DPX_BENCH_TIMEOUT_MS", 600_000))
US_BBOX = (-125.0, 24.0, -66.5, 49.5)


def synthetic_country(n: int, seed: int = 0) -> pd.DataFrame:
    """n points: 40 Gaussian 'cities' (sizes ~ 1/rank) plus 10 % uniform, inside US_BBOX."""
    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = US_BBOX
    k = 40
    centres = np.column_stack([rng.uniform(x0 + 2, x1 - 2, k), rng.uniform(y0 + 2, y1 - 2, k)])
    weights = 1.0 / np.arange(1, k + 1)
    n_bg = n // 10
    which = rng.choice(k, size=n - n_bg, p=weights / weights.sum())
    pts = centres[which] + rng.normal(0.0, 0.3, size=(n - n_bg, 2))
    bg = np.column_stack([rng.uniform(x0, x1, n_bg), rng.uniform(y0, y1, n_bg)])
    pts = np.vstack([pts, bg])
    pts[:, 0] = np.clip(pts[:, 0], x0, x1)
    pts[:, 1] = np.clip(pts[:, 1], y0, y1)
    return pd.DataFrame({"lat": pts[:, 1].round(5), "lon": pts[:, 0].round(5)})


def _new_page(browser, blocked: list[str]):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})

    def guard(route):
        host = urlparse(route.request.url).hostname or ""
        if route.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    return context, page


def _open(page, url: str, path: str, heading: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name="DP Explorer").first.wait_for()
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=heading).first.wait_for()


BUILD = "Build releases"
EVALUATE = "Evaluate the releases (evaluation only — uses raw data)"


def _location_rendered(page) -> None:
    page.get_by_role("heading", name="Downloads").wait_for()
    page.get_by_role("heading", name="Charged releases").wait_for()
    frame = page.frame_locator("iframe[title*='streamlit_folium']").first
    frame.locator(".leaflet-overlay-pane canvas").first.wait_for()


def _idle(page) -> None:
    page.wait_for_timeout(300)
    page.get_by_test_id("stStatusWidget").wait_for(state="detached")


def case_location_demo(page, url: str) -> dict[str, float]:
    """Build, then Evaluate in the same session: two timings."""
    _open(page, url, "location_histograms", "Location histograms")
    button = page.get_by_role("button", name=BUILD, exact=True)
    button.wait_for()
    t0 = time.perf_counter()
    button.click()
    _location_rendered(page)
    built = time.perf_counter() - t0
    _idle(page)
    evaluate = page.get_by_role("button", name=EVALUATE)
    t0 = time.perf_counter()
    evaluate.click()
    page.get_by_text("Evaluation cost").first.wait_for()
    page.get_by_text("MRE by query size").first.wait_for()
    return {"build": built, "evaluate": time.perf_counter() - t0}


def case_location_upload(page, url: str, csv_bytes: bytes) -> dict[str, float]:
    """Upload (until the region can be chosen), then Build: two timings."""
    _open(page, url, "location_histograms", "Location histograms")
    page.get_by_text("Upload CSV/Parquet").click()
    t0 = time.perf_counter()
    page.locator("input[type='file']").set_input_files(
        files=[{"name": "country_200k.csv", "mimeType": "text/csv", "buffer": csv_bytes}]
    )
    region = page.get_by_role("combobox", name="Bounding box", exact=False)
    region.wait_for()
    _idle(page)
    uploaded = time.perf_counter() - t0
    region.click()
    page.get_by_role("option", name="Continental United States").click()
    button = page.get_by_role("button", name=BUILD, exact=True)
    button.wait_for()
    _idle(page)  # let the rerun from the region choice settle
    t0 = time.perf_counter()
    button.click()
    _location_rendered(page)
    return {"upload": uploaded, "build": time.perf_counter() - t0}


def case_dp_sql(page, url: str) -> float:
    _open(page, url, "dp_sql", "DP SQL")
    page.get_by_role("tab", name="Run").click()
    button = page.get_by_role("button", name="Run query")
    button.wait_for()
    t0 = time.perf_counter()
    button.click()
    page.get_by_text("Partitions released").first.wait_for()
    return time.perf_counter() - t0


def case_pp(page, url: str) -> float:
    _open(page, url, "pp_balancing", "PP balancing")
    button = page.get_by_role("button", name="Publish (perturb)")
    button.wait_for()
    t0 = time.perf_counter()
    button.click()
    page.get_by_role("button", name="Published CSV", exact=True).wait_for()
    return time.perf_counter() - t0


def _summary(seconds: list[float]) -> dict:
    return {
        "median_s": round(statistics.median(seconds), 3),
        "min_s": round(min(seconds), 3),
        "max_s": round(max(seconds), 3),
        "runs_s": [round(s, 3) for s in seconds],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--points", type=int, default=200_000)
    ap.add_argument("--only", default="", help="run only the cases whose name contains this")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    upload = synthetic_country(args.points).to_csv(index=False).encode()
    cases = {
        "location_histograms: default demo (htf-gaussian-sigma20, 100k points)": case_location_demo,
        f"location_histograms: {args.points:,}-point upload (continental US)": lambda p, u: (
            case_location_upload(p, u, upload)
        ),
        "dp_sql: default example, Run": case_dp_sql,
        "pp_balancing: default demo, Publish": case_pp,
    }
    cases = {k: v for k, v in cases.items() if args.only in k}
    results, errors, blocked = {}, {}, []
    load_start = [round(x, 2) for x in os.getloadavg()]
    with streamlit_server() as server, sync_playwright() as pw:
        url = server.url
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )  # fmt: skip
        for name, case in cases.items():
            times: dict[str, list[float]] = {}
            for i in range(args.repeats):
                print(f"[app_latency] {name}: run {i + 1}/{args.repeats}", file=sys.stderr)
                context, page = _new_page(browser, blocked)
                try:
                    out = case(page, url)
                    for step, seconds in (out if isinstance(out, dict) else {"": out}).items():
                        times.setdefault(step, []).append(seconds)
                except Exception as exc:  # noqa: BLE001 - reported in the JSON, not hidden
                    errors[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                    break
                finally:
                    context.close()
            for step, seconds in times.items():
                results[f"{name}, {step}" if step else name] = _summary(seconds)
        browser.close()
    print(
        json.dumps(
            {
                "benchmark": "app_latency",
                "what": "seconds from the click on the main action to the rendered result",
                "mode": "secure (the app's default)",
                "repeats": args.repeats,
                "upload_points": args.points,
                "upload_bytes": len(upload),
                "results": results,
                "errors": errors,
                "requests_blocked_outside_localhost": len(blocked),
                "machine": {
                    "load_average_1_5_15_min_at_end": [round(x, 2) for x in os.getloadavg()],
                    "load_average_at_start": load_start,
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "platform": platform.platform(),
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
