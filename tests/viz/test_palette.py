"""One palette of method colours (issue 18.5): every method has its own colour, the same in the
MRE chart and the tuning curves, and "Recommended" never shares the kd-tree's blue; log axes
label their ticks with full values (no bare minor labels "2 … 8")."""

from __future__ import annotations

import itertools

from core.spatial.methods import LABELS
from core.spatial.tuning import Reach, SmallestEpsilon, TuningCurve, TuningPoint, TuningResult
from core.viz.axes import log_axis, log_ticks
from core.viz.palette import METHOD_COLOURS, method_colour
from core.viz.spatial import mre_chart
from core.viz.tuning import tuning_figure


def rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))


def distance(a: str, b: str) -> float:
    return sum((x - y) ** 2 for x, y in zip(rgb(a), rgb(b), strict=True)) ** 0.5


def test_every_method_has_its_own_colour():
    colours = [method_colour(m) for m in LABELS]
    assert set(LABELS) <= set(METHOD_COLOURS)
    assert len(set(colours)) == len(colours)
    closest = min(distance(a, b) for a, b in itertools.combinations(colours, 2))
    assert closest > 40  # no two methods a shade apart


def test_recommended_is_not_a_blue_like_the_kd_tree():
    auto, kd = method_colour("auto"), method_colour("kdtree-geo")
    assert distance(auto, kd) > 150
    r, g, b = rgb(auto)
    assert not (b > r + 40 and b > g + 40)  # not blue-dominant


ROWS = [
    {"method": m, "query_size": q, "mre": mre, "mre_std": 0.01}
    for m, base in (("auto", 0.05), ("kdtree-geo", 0.08), ("ug", 0.3))
    for q, mre in ((0.02, base * 2), (0.06, base), (0.1, base / 2))
]


def test_mre_chart_uses_the_palette_and_a_readable_log_axis():
    fig = mre_chart(ROWS)
    colours = {t.name: t.line.color for t in fig.data}
    assert colours == {LABELS[m]: method_colour(m) for m in ("auto", "kdtree-geo", "ug")}
    axis = fig.layout.yaxis
    assert axis.type == "log" and axis.tickmode == "array"
    assert [float(t) for t in axis.ticktext] == list(axis.tickvals)  # full values, not "2"


def curve(method: str, base: float) -> TuningCurve:
    points = tuple(TuningPoint(e, base / e, 0.01) for e in (0.1, 0.2, 0.5, 1.0))
    return TuningCurve(method, points, SmallestEpsilon(None, Reach.NOT_REACHED))


def test_tuning_curves_use_the_same_colours_as_the_mre_chart():
    result = TuningResult(
        (curve("ug", 0.2), curve("auto", 0.05)), (0.1, 0.2, 0.5, 1.0), 0.1, 2, 50, (0.02,), 20.0,
        {"mode": "seeded"},
    )  # fmt: skip
    fig = tuning_figure(result)
    lines = {t.name: t.line.color for t in fig.data}
    assert lines == {LABELS["ug"]: method_colour("ug"), LABELS["auto"]: method_colour("auto")}
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.type == "log" and [float(t) for t in axis.ticktext] == list(axis.tickvals)


def test_log_ticks_are_one_two_five_with_full_labels():
    assert log_ticks([0.013, 0.4]) == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
    axis = log_axis([0.05, 2.0], "t")
    assert axis["ticktext"] == ["0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5"]
    assert log_ticks([0.001, 100.0]) == [0.001, 0.01, 0.1, 1.0, 10.0, 100.0]  # decades only
