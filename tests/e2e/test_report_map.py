"""The HTML report's map in a real browser (offline): the legend's labels, the place names and
the axis labels as Chromium lays them out never overlap, and the accuracy note sits beside the
map."""

from __future__ import annotations

import json

from core.cli import main
from tests.registry.helpers import write_points

BBOX = "--bbox=-118.5,33.7,-117.9,34.3"

BOXES = """(sel) => Array.from(document.querySelectorAll(sel)).map(e => {
    const r = e.getBoundingClientRect();
    return {text: e.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
})"""


def _run(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if (
                a["left"] < b["right"] and b["left"] < a["right"]
                and a["top"] < b["bottom"] and b["top"] < a["bottom"]
            ):  # fmt: skip
                out.append((a["text"], b["text"]))
    return out


def test_report_map_labels_do_not_overlap_in_the_browser(
    browser, capsys, registry_dir, tmp_path, screenshot
):
    points = write_points(tmp_path / "pts.csv", n=3000)
    _run(capsys, ["dataset", "add", "pts", "--table", f"t={points}", "--row-is-unit",
                  "--epsilon", "5"])  # fmt: skip
    ug = _run(capsys, ["release", "--dataset", "pts", BBOX, "--grid", "64", "--method", "ug",
                       "--epsilon", "1"])  # fmt: skip
    report = tmp_path / "report.html"
    _run(capsys, ["report", str(ug["registry"]["release_id"]), "--out", str(report)])

    context = browser.new_context(offline=True, viewport={"width": 1100, "height": 900})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.goto(report.as_uri())
    page.locator("svg.leaves-map").first.wait_for()

    legend = page.evaluate(BOXES, "svg.leaves-map .legend text")
    assert len(legend) >= 3 and all(b["right"] > b["left"] for b in legend)
    assert _overlapping(legend) == []
    swatches = page.evaluate(BOXES, "svg.leaves-map .legend .swatch")
    assert _overlapping(legend + swatches) == []
    places = page.evaluate(BOXES, "svg.leaves-map text.place")
    bar = page.evaluate(BOXES, "svg.leaves-map .scale-bar text")
    assert len(places) >= 5 and len(bar) == 1 and _overlapping(places + bar) == []
    axes = page.evaluate(BOXES, "svg.leaves-map .axes text")
    assert len(axes) >= 6 and _overlapping(axes) == []
    # the accuracy note is beside the map (to its right, overlapping it vertically)
    svg = page.locator("svg.leaves-map").first.bounding_box()
    note = page.locator("aside.map-note").first.bounding_box()
    assert note["x"] >= svg["x"] + svg["width"] and note["y"] < svg["y"] + svg["height"]
    assert "within ±" in page.locator("aside.map-note").first.inner_text()
    screenshot(page, "report-map.png")
    assert [u for u in requests if not u.startswith("file:")] == []
    context.close()
