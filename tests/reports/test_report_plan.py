"""Reports show planned vs realized: a release under a saved budget plan names the plan's item
and its status next to what it spent; a release before any plan has no such section."""

from __future__ import annotations

import json
from html import unescape

from core.cli import main
from core.planning.budget import plan_status, plan_vs_spend
from core.registry import Registry
from core.reports.html import report_html
from tests.registry.helpers import BBOX, write_points


def _run(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def _htf(capsys) -> int:
    out = _run(capsys, ["htf", "--dataset", "pts", "--max-points-per-person", "1", BBOX,
                        "--epsilon", "1"])  # fmt: skip
    return out["registry"]["release_id"]


def test_report_shows_the_plan_item_and_status(capsys, registry_dir, tmp_path):
    points = write_points(tmp_path / "pts.csv")
    _run(capsys, ["dataset", "add", "pts", "--table", f"t={points}", "--uid", "uid",
                  "--epsilon", "5"])  # fmt: skip
    before = _htf(capsys)
    _run(capsys, ["plan", "budget", "save", "--dataset", "pts", "--item", "location:1",
                  "--name", "Q3"])  # fmt: skip
    planned, beyond = _htf(capsys), _htf(capsys)
    reg = Registry()
    plans, releases = reg.plans("pts"), reg.releases("pts")
    (plan,) = plans
    assert "Planned vs realized" not in report_html(reg, before)
    for rid in (planned, beyond):
        html = unescape(report_html(reg, rid))
        status = plan_status(reg.release(rid), plans, releases).value
        assert "<h2>Planned vs realized</h2>" in html
        assert f"budget plan <b>Q3</b> (#{plan.id}" in html and f"<b>{status}</b>" in html
        assert plan_vs_spend(plan, plans, releases).describe() in html
    assert plan_status(reg.release(planned), plans, releases).value == "as planned"
    assert plan_status(reg.release(beyond), plans, releases).value == "beyond the plan"
    assert "<td>location</td><td>1</td><td>1</td><td>1</td><td>as planned</td>" in unescape(
        report_html(reg, planned)
    )
    assert "no planned item with room left" in unescape(report_html(reg, beyond))
