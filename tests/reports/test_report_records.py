"""Reports whose records do not contradict themselves (issue 28 item 4): each leaf's noise scale
and 95 % interval read from the mechanism that drew it; one charge wording per RunKind in every
line that speaks of the charge; the unit the dataset declared."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from core.balancing.record import PPArtefact, SubTableView
from core.cli import main
from core.governance.artefacts import MISSING, to_json
from core.privacy import Cost, DiscreteLaplace, Laplace, PPRandomization
from core.registry import Claim, Policy, Registry, RunKind
from core.reports import render_report, report_html
from core.spatial.record import GridSpec, LocationArtefact, MethodChoice
from tests.registry.helpers import write_points

BBOX = (-118.5, 33.7, -117.9, 34.3)
K_EPS = "a person with k points in the data is protected at k × ε"


def text_of(html: str) -> str:
    html = re.sub(r"<svg.*</svg>", " ", html, flags=re.S)
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def leaf_table(html: str) -> list[list[str]]:
    body = re.search(r'<table class="result">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return [
        [unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def summary_value(html: str, field: str) -> str:
    m = re.search(rf"<tr><td>{re.escape(field)}</td><td>(.*?)</td></tr>", html)
    assert m, f"no summary row {field!r}"
    return unescape(m.group(1))


@pytest.fixture
def reg(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    r = Registry(tmp_path / "reg")
    r.add_dataset("stops", [("t", table)], Policy(5.0, 1e-5), uid="uid")
    r.add_dataset("rows", [("t", table)], Policy(5.0, 1e-5), row_is_unit=True)
    return r


def _location_art(leaf_scale, unit="one point (one row of the table)", column=None, k=1):
    return LocationArtefact(
        method="htf", label="HTF", unit=unit, grid=GridSpec(BBOX, 8, 8),
        leaves=((0, 4, 0, 8), (4, 8, 0, 4), (4, 6, 4, 8), (6, 8, 4, 8)),
        values=(2341.0, -3.0, 17.0, 0.0), leaf_scale=leaf_scale, unit_column=column,
        max_points=k,
    )  # fmt: skip


def _record(reg, tool, dataset, mode, art, mechanisms, claim):
    cost = Cost(
        sum(m.cost.epsilon for m in mechanisms if not m.in_place_of),
        sum(m.cost.delta for m in mechanisms if not m.in_place_of),
    )
    rel = reg.charge(tool, dataset, {"via": "test"}, cost, mode, claim)
    return reg.attach(rel.id, to_json(art), mechanisms)


# -- accuracy from the mechanisms ---------------------------------------------------------------
def test_each_leaf_row_states_the_scale_and_interval_of_the_mechanism_that_drew_it(reg):
    n = Laplace("htf: noisy N (height)", sensitivity=1, epsilon=0.01)
    deep = DiscreteLaplace("htf: node counts, height 1", sensitivity=1, epsilon=0.3)
    top = DiscreteLaplace("htf: node counts, height 0", sensitivity=1, epsilon=0.69)
    art = _location_art((top.scale, deep.scale, deep.scale, deep.scale))
    rec = _record(reg, "location", "stops", "secure", art, [n, deep, top], Claim(art.unit))
    html = render_report(rec)
    rows = leaf_table(html)
    assert len(rows) == 4 and MISSING not in html.split('<table class="result">')[1]
    for row, value, m in zip(rows, art.values, (top, deep, deep, deep), strict=True):
        scale, interval = row[5], row[6]
        assert float(scale) == pytest.approx(m.scale, rel=1e-3)
        hw = m.half_width(0.95)  # the discrete Laplace's own 95 % half-width, an integer
        lo, hi = (float(x) for x in interval.strip("[]").split(","))
        assert (lo, hi) == (value - hw, value + hw)
    # each leaf's tooltip on the map carries the same half-width
    assert f"<title>noisy count 2341 ± {top.half_width(0.95)} (95 %);" in html
    # the plain sentence names the range of ± figures and the scales
    text = text_of(html)
    assert (
        f"Each leaf's count is within ±{top.half_width(0.95)} to ±{deep.half_width(0.95)} of the "
        "true count 95 % of the time, depending on the leaf (discrete Laplace noise, scale b = "
        f"{top.scale:.4g} to {deep.scale:.4g}"
    ) in text


def test_leaves_that_combine_measurements_say_what_is_stated_instead(reg):
    counts = DiscreteLaplace("kd: node counts", sensitivity=1, epsilon=0.5)
    art = _location_art(None)
    rec = _record(reg, "location", "stops", "secure", art, [counts], Claim(art.unit))
    html = render_report(rec)
    for row in leaf_table(html):
        assert MISSING not in row
        assert row[5].startswith("post-processed") and row[6].startswith("not stated per leaf")
    text = text_of(html)
    assert "no single ± figure is stated per leaf" in text
    assert f"within ±{counts.half_width(0.95)} of their true value 95 % of the time" in text


def test_after_recommended_the_accuracy_is_the_chosen_methods_not_the_features(reg):
    feature = DiscreteLaplace("auto: noisy coarse counts (method choice)", sensitivity=1,
                              epsilon=0.01)  # fmt: skip
    cells = DiscreteLaplace("ag: cell counts", sensitivity=1, epsilon=0.5)
    for leaf_scale in (None, (cells.scale,) * 4):
        art = LocationArtefact(
            method="auto", label="Recommended", unit="one point (one row of the table)",
            grid=GridSpec(BBOX, 8, 8), leaves=((0, 4, 0, 8), (4, 8, 0, 4), (4, 6, 4, 8),
            (6, 8, 4, 8)), values=(5.0, 1.0, 2.0, 0.0), leaf_scale=leaf_scale,
            choice=MethodChoice("ag", ("spread data",)),
        )  # fmt: skip
        rec = _record(reg, "location", "stops", "secure", art, [feature, cells], Claim(art.unit))
        text = text_of(render_report(rec))
        assert f"±{cells.half_width(0.95)} of" in text
        assert f"±{feature.half_width(0.95)}" not in text.split("Mechanisms")[1].split("Result")[1]


def _cli(capsys, argv) -> dict:
    code = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_cli_releases_on_a_row_is_unit_dataset_report_intervals_and_the_declared_unit(
    capsys, registry_dir, tmp_path
):
    points = write_points(tmp_path / "pts.csv", n=600)
    _cli(capsys, ["dataset", "add", "pts", "--table", f"t={points}", "--row-is-unit",
                  "--epsilon", "5", "--delta", "1e-5"])  # fmt: skip
    bbox = "--bbox=-118.5,33.7,-117.9,34.3"
    ug = _cli(capsys, ["release", "--dataset", "pts", bbox, "--grid", "32", "--method", "ug",
                       "--epsilon", "1"])  # fmt: skip
    plus = _cli(capsys, ["release", "--dataset", "pts", bbox, "--grid", "32", "--method",
                         "htf+", "--epsilon", "1"])  # fmt: skip
    registry = Registry(registry_dir)
    rid = ug["registry"]["release_id"]
    cells = next(m for m in registry.release(rid).mechanisms if "cell counts" in m.label)
    html = report_html(registry, rid)
    rows = leaf_table(html)
    assert len(rows) == ug["n_leaves"]
    hw = cells.half_width(0.95)
    for row in rows:
        value = float(row[4])
        assert float(row[5]) == pytest.approx(cells.scale, rel=1e-3)
        assert row[6] == f"[{value - hw:g}, {value + hw:g}]"
    # the unit the owner declared: each row is one person (not "one point ... k × ε")
    text = text_of(html)
    assert summary_value(html, "unit") == "one row (each row is one person)"
    assert "unit: one row (each row is one person)" in text and K_EPS not in text
    html = report_html(registry, plus["registry"]["release_id"])
    assert MISSING not in html.split('<table class="result">')[1]


# -- the unit --------------------------------------------------------------------------------
def test_unit_sentence_follows_the_declared_unit(reg):
    m = DiscreteLaplace("ug: grid cell counts", sensitivity=1, epsilon=1.0)
    point = _location_art((m.scale,) * 4)
    # registered --row-is-unit: one row, each row one person
    rec = _record(reg, "location", "rows", "secure", point, [m], Claim(point.unit))
    text = text_of(report_html(reg, rec.id))
    assert "unit: one row (each row is one person)" in text and K_EPS not in text
    # a person column with a per-person bound: no k × ε sentence
    person = _location_art(
        (3.0,) * 4, unit="each person (at most 3 points; person column 'uid')", column="uid", k=3
    )
    m3 = DiscreteLaplace("ug: grid cell counts", sensitivity=3, epsilon=1.0)
    rec = _record(reg, "location", "stops", "secure", person, [m3], Claim(person.unit, "uid"))
    text = text_of(report_html(reg, rec.id))
    assert "person column 'uid'" in text and K_EPS not in text
    assert "of the true count of points kept (at most 3 per person)" in text
    # files given directly, no person column: one point, and the k × ε caveat
    rec = _record(reg, "location", None, "secure", point, [m], Claim(point.unit))
    text = text_of(report_html(reg, rec.id))
    assert "unit: one point (one row of the table)" in text and K_EPS in text


# -- one charge wording per RunKind -----------------------------------------------------------
STATUS = {
    RunKind.RELEASE: "charged to dataset stops",
    RunKind.UNREGISTERED: "not charged (files given directly; recorded only)",
    RunKind.DEMO: "not charged (seeded demo)",
}
RUNS = [("stops", "secure", RunKind.RELEASE), (None, "secure", RunKind.UNREGISTERED),
        (None, "seeded", RunKind.DEMO)]  # fmt: skip


def _pp(reg, dataset, mode):
    plan = DiscreteLaplace("pp: SA value counts for the partition plan", sensitivity=2, epsilon=1)
    r = PPRandomization("pp: sub-table 1", rho1="1/5", rho2="1/2", retention="1/3", domain_size=3)
    art = PPArtefact(
        sa="race", published_columns=("race",), rows_published=100,
        subtables=(SubTableView(("a", "b", "c"), "1/3", "1/5", str(r.posterior_bound)),),
        plan="Partition planned from DP-noised counts (epsilon 1)",
    )  # fmt: skip
    claim = Claim("one record", None, "1/5", "1/2")
    return _record(reg, "pp", dataset, mode, art, [plan, r], claim)


def _location(reg, dataset, mode):
    m = DiscreteLaplace("ug: grid cell counts", sensitivity=1, epsilon=1.0)
    art = _location_art((m.scale,) * 4)
    return _record(reg, "location", dataset, mode, art, [m], Claim(art.unit))


@pytest.mark.parametrize("make", [_pp, _location], ids=["pp", "location"])
@pytest.mark.parametrize(("dataset", "mode", "kind"), RUNS, ids=[k.value for *_, k in RUNS])
def test_charged_lines_agree_for_every_run_kind(reg, make, dataset, mode, kind):
    rec = make(reg, dataset, mode)
    assert rec.kind is kind
    html = report_html(reg, rec.id)
    text = text_of(html)
    status = STATUS[kind]
    eps = f"ε = {rec.epsilon:g}, δ = {rec.delta:g}"
    if kind is not RunKind.RELEASE:  # the old reports: "(charged to the dataset)", "ε charged 0"
        assert not re.search(r"(?<!not )charged to", text), "a run not charged says 'charged to'"
        assert "ε charged" not in text
    # the summary's (ε, δ) line and its charged line say the same thing
    assert summary_value(html, "privacy cost (ε, δ)") == f"{eps}, {status}"
    charged = summary_value(html, "charged")
    assert charged == (f"{eps} to dataset stops" if kind is RunKind.RELEASE else status)
    # and so do the guarantee, PP's plan line and the mechanisms' total
    assert f"This (ε, δ) is {status}." in text or f"{eps}, {status}." in text
    assert f"total (basic composition): {status}" in text
    others = [s for k, s in STATUS.items() if k is not kind]
    for other in others:
        assert other not in text


def test_pp_plan_line_names_the_charge(reg):
    text = text_of(report_html(reg, _pp(reg, None, "secure").id))
    assert (
        "planned from noisy counts: ε = 1, δ = 0, not charged (files given directly; recorded "
        "only)." in text
    )
