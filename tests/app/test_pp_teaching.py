"""PP's Phase 1 explained in sentences (issue 18.3): each step says in plain words what the
group takes from which values and why that many, ABOVE the step chart; the formula is in an
expander beside it; Play stops at the last step."""

from __future__ import annotations

from fractions import Fraction

import pytest

from core.balancing.demos import FIGURE9_COUNTS
from core.balancing.phase1 import order_at
from core.balancing.plan import plan_partition
from ui.pp.teaching import step_sentences

PAGE = "pages/pp_balancing.py"
MIXED = {"v0": 8, "v1": 8, "v2": 11, "v3": 7, "v4": 4, "v5": 2}  # all three kinds of step


def sentences(counts: dict[str, int]) -> list[str]:
    plan = plan_partition(counts, Fraction(1, 3), Fraction(2, 3))
    beta = plan.phase1.beta
    return [step_sentences(r, order_at(plan.phase1, r.j), beta) for r in plan.phase1.trace]


def test_a_step_that_uses_up_the_beta_th_value():
    first = sentences(FIGURE9_COUNTS)[0]
    assert "Group g1 takes 6 records from each of the 3 most frequent values" in first
    assert "x1 (12), x2 (8), x3 (6)" in first
    assert "6 is all of x3, the 3rd most frequent value" in first
    assert "the 24 records left stay balanced" in first
    assert "φ" not in first and "Equation" not in first  # words, not the formula


def test_a_step_cut_short_by_the_next_value_and_the_remainder():
    steps = sentences(MIXED)
    assert "takes 6 records" in steps[0] and "It stops below the 8 records of v1" in steps[0]
    assert "v3 (7 records), the most frequent value not taken" in steps[0]
    assert "whole remainder (4 records) becomes the last group, g5" in steps[-1]
    assert all(len(s.split(". ")) <= 3 for s in steps)  # two sentences each


def _flat(node, out):
    """Every element under `node`, in page order."""
    for child in getattr(node, "children", {}).values():
        out.append(child)
        _flat(child, out)
    return out


def test_the_sentences_are_above_the_chart_and_the_formula_beside_it(app_test):
    at = app_test(PAGE).run()
    assert not at.exception
    elements = _flat(at.main, [])
    sentence = next(
        i for i, e in enumerate(elements)
        if getattr(e, "type", "") == "markdown" and "Group g1 takes" in e.value
    )  # fmt: skip
    chart = next(
        i for i, e in enumerate(elements)
        if getattr(e, "type", "") == "plotly_chart" and "pp_step_chart" in (e.proto.id or "")
    )  # fmt: skip
    assert sentence < chart
    formula = next(e for e in at.expander if e.label.startswith("The formula"))
    assert any("φ(fβ) = 42/3" in c.value for c in formula.code)


@pytest.mark.parametrize("start", [1, 4])
def test_play_runs_to_the_last_step_and_turns_itself_off(app_test, start):
    at = app_test(PAGE).run()
    at.slider(key="pp_step").set_value(start).run()
    at.toggle(key="pp_play").set_value(True).run()
    assert not at.exception
    assert at.slider(key="pp_step").value == 5
    assert at.toggle(key="pp_play").value is False
