"""AppTest of the PP page's Plan step, owner (the demo table's size and values) and analyst
(a registered dataset, size and categories typed, no SA value on screen): the answer equals
`core.planning.pp`'s on the same public basis, ρ2 can be carried into the settings, and
nothing is charged."""

from __future__ import annotations

from fractions import Fraction

import pytest

from core.balancing.demos import DEMOS, PATIENTS_NAME
from core.planning.pp import PPShape, plan_pp, strictest_rho2
from core.registry import Policy, Registry
from tests.app.conftest import element_texts
from ui.plan.pp import ANSWER_KEY

PAGE = "pages/pp_balancing.py"
SENTINEL = "ZQX-SENTINEL-7303"


def _open_plan(at):
    at.session_state["pp_plan_open"] = True
    at.run()
    assert not at.exception, at.exception


def test_owner_plans_on_the_demo_table_and_carries_rho2(app_test, registry_dir):
    at = app_test(PAGE, timeout=120)
    at.run()
    _open_plan(at)
    cats_box = next(t for t in at.text_input if (t.key or "").startswith("pp_plan_cats_"))
    cats = [c.strip() for c in cats_box.value.split(",")]
    assert len(cats) >= 2
    rho1 = Fraction(next(t for t in at.text_input if t.key.startswith("pp_rho1_")).value)
    rho2 = Fraction(next(t for t in at.text_input if t.key.startswith("pp_rho2_")).value)
    at.number_input(key="pp_plan_target").set_value(20.0).run()  # the demo table has 42 rows
    at.button(key="pp_plan_run").click().run()
    assert not at.exception, at.exception
    answer = at.session_state[ANSWER_KEY]
    rows = answer.current.basis.split(" rows")[0].replace(",", "")
    shape = PPShape.uniform(cats, int(rows))
    assert answer.current == plan_pp(shape, rho1, rho2, 1.0, 0.95)
    best = strictest_rho2(shape, rho1, 0.2, 1.0, 0.95)
    assert best.rho2 is not None and answer.strictest.rho2 == best.rho2
    at.button(key="pp_plan_use").click().run()
    assert not at.exception, at.exception
    rho2_box = next(t for t in at.text_input if t.key.startswith("pp_rho2_"))
    assert Fraction(rho2_box.value) == best.rho2
    assert Registry().releases() == []


@pytest.fixture
def analyst(registry_dir, tmp_path, monkeypatch) -> Registry:
    monkeypatch.setenv("DPX_MODE", "analyst")
    df = next(d for d in DEMOS if d.name == PATIENTS_NAME).load().copy()
    df.loc[0, "Disease"] = SENTINEL
    path = tmp_path / "patients.csv"
    df.to_csv(path, index=False)
    reg = Registry(registry_dir)
    reg.add_dataset("patients", [("patients", path)], Policy(1.0, 1e-5))
    return reg


def test_analyst_plans_from_typed_public_facts_only(app_test, analyst):
    at = app_test(PAGE, timeout=120)
    at.run()
    at.selectbox(key="pp_sa_registered:patients").set_value("Disease")
    at.text_input(key="pp_rho1_registered:patients").set_value("1/5")
    at.text_input(key="pp_rho2_registered:patients").set_value("1/2").run()
    at.radio(key="pp_missing").set_value("drop those records").run()
    _open_plan(at)
    cats_key = "pp_plan_cats_registered:patients_Disease"
    assert at.text_input(key=cats_key).value == ""  # no SA value is offered to an analyst
    at.text_input(key=cats_key).set_value("flu, cold, asthma, diabetes").run()
    at.number_input(key="pp_plan_rows").set_value(5000).run()
    at.button(key="pp_plan_run").click().run()
    assert not at.exception, at.exception
    shape = PPShape.uniform(["flu", "cold", "asthma", "diabetes"], 5000)
    answer = at.session_state[ANSWER_KEY]
    assert answer.current == plan_pp(shape, Fraction(1, 5), Fraction(1, 2), 1.0, 0.95)
    assert answer.strictest.rho2 == strictest_rho2(shape, Fraction(1, 5), 0.02).rho2
    shown = " ".join(element_texts(at._tree))
    # the answer, in the glossary's spelling; no raw value
    assert "PP at ρ1 = 1/5" in shown and SENTINEL not in shown
    assert analyst.releases() == []
