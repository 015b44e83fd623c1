"""Reports rendered from typed release records: the unit named, accuracy from public parameters
per tool, a map with boundaries and a legend, lon/lat leaf tables, one spelling of missing."""

from __future__ import annotations

import re

import pytest

from core.balancing.record import PPArtefact, SubTableView
from core.dpsql.record import SqlArtefact, ThresholdView
from core.governance.artefacts import MISSING, artefact_of, to_json
from core.privacy import Cost, DiscreteLaplace, NoisyThreshold, PPRandomization
from core.registry import Claim, Policy, Registry
from core.reports import render_report
from core.spatial.record import GridSpec, LocationArtefact, MethodChoice


@pytest.fixture
def reg(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    r = Registry(tmp_path / "reg")
    r.add_dataset("stops", [("t", table)], Policy(5.0, 1e-5), uid="stop_id")
    return r


def record(reg, tool, cost, claim, artefact, mechanisms):
    rel = reg.charge(tool, "stops", {"via": "test"}, cost, "secure", claim)
    return reg.attach(rel.id, to_json(artefact), mechanisms)


def location(reg):
    grid = GridSpec((-93.33, 44.89, -93.19, 45.05), 4, 4)
    art = LocationArtefact(
        method="auto",
        label="Recommended (private choice)",
        unit="each person (column stop_id, at most 3 points)",
        grid=grid,
        leaves=((0, 2, 0, 2), (0, 2, 2, 4), (2, 4, 0, 4)),
        values=(120.0, -3.0, 40.5),
        leaf_scale=(2.0, 2.0, 2.0),
        choice=MethodChoice("ag", ("noisy N ≈ 2,000 is small for the grid", "spread data")),
    )
    m = DiscreteLaplace("ag: cell counts", sensitivity=3, epsilon=1.5)
    return record(reg, "location", Cost(1.5), Claim(art.unit, "stop_id"), art, [m]), art


def test_location_report_names_the_unit_and_states_each_leafs_interval(reg):
    rec, art = location(reg)
    assert artefact_of(rec) == art  # the record reads back as the typed artefact
    html = render_report(rec)
    assert "each person (column stop_id, at most 3 points)" in html
    assert "Recommended chose <b>ag</b>" in html and "spread data" in html
    # lon/lat leaf table with the 95 % interval of the mechanism that drew the counts
    half = DiscreteLaplace("ag: cell counts", sensitivity=3, epsilon=1.5).half_width(0.95)
    assert f"[{120 - half:g}, {120 + half:g}]" in html
    assert "-93.33" in html and "44.89" in html
    # a map with a legend and country/state boundaries (Minneapolis is in the US)
    svg = re.search(r'<svg class="figure leaves-map".*?</svg></div>', html, re.S).group(0)
    assert svg.count('class="legend"') == 1 and '<g class="boundaries"><path' in svg
    assert "noisy count 120" in svg


def test_sql_report_states_intervals_and_threshold_survival(reg):
    th = NoisyThreshold("partition selection", sensitivity=2, epsilon=0.5, delta=1e-6, threshold=31)
    count = DiscreteLaplace("n: COUNT", sensitivity=2, epsilon=0.5)
    art = SqlArtefact(
        query="SELECT WITH DIFFERENTIAL_PRIVACY ... race, COUNT(*) ...",
        unit_column="stop_id",
        columns=("race", "n"),
        rows=(("White", 812.0), (None, 64.0), ("NULL", 40.0)),
        intervals={"n": [[800.0, 824.0], [52.0, 76.0], [28.0, 52.0]]},
        threshold=ThresholdView(31, 4.0, 0.5, 1e-6),
        options={"epsilon": 1.0},
    )
    rec = record(reg, "sql", Cost(1.0, 1e-6), Claim("one person", "stop_id"), art, [count, th])
    html = render_report(rec)
    assert "column stop_id" in html and "column None" not in html
    assert "T = 31" in html and f"{th.survival(31):.6g}" in html
    assert "812 [800, 824]" in html
    # one spelling of missing in the whole report
    assert (
        html.count(MISSING) >= 2 and "NULL" not in html.split("<pre>")[0] + html.split("</pre>")[1]
    )
    assert "None" not in re.sub(r"<pre>.*?</pre>", "", html, flags=re.S)


def test_pp_report_lists_published_columns_retention_and_posterior(reg):
    m = PPRandomization("sub-table 1", rho1="1/5", rho2="1/2", retention="1/3", domain_size=3)
    art = PPArtefact(
        sa="race",
        published_columns=("race", "precinct"),
        rows_published=51920,
        subtables=(SubTableView(("a", "b", "c"), "1/3", "1/5", str(m.posterior_bound)),),
        plan="Partition planned from DP-noised counts (epsilon 0.1)",
    )
    rec = record(reg, "pp", Cost(0.1), Claim("one record", None, "1/5", "1/2"), art, [m])
    html = render_report(rec)
    assert "(1/5, 1/2)-privacy" in html and "race, precinct" in html
    assert "<td>1/3</td>" in html and f"<td>{m.posterior_bound}</td>" in html
    assert "nothing to draw" not in html and "DP-noised counts" in html


def test_a_record_without_a_result_says_so(reg):
    rel = reg.charge("sql", "stops", {}, Cost(0.5), "secure", Claim("one person", "stop_id"))
    html = render_report(reg.release(rel.id))
    assert "No result is attached" in html and "charged, never delivered" in html
