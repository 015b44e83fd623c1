"""Issue 28 item 3 on the pages: the analyst's confirmation states the share that triggered it
(ε, δ or both, with both numbers), and once δ is spent the refusal names δ, not ε."""

from __future__ import annotations

import pytest

from core.dpsql.demos import DEMOS as SQL_DEMOS
from core.registry import Policy, Registry

SQL = "pages/dp_sql.py"


def _staff(registry_dir, tmp_path, delta: float) -> Registry:
    reg = Registry(registry_dir)
    files = []
    for name, frame in next(d for d in SQL_DEMOS if d.name == "sql-employee-orders").load().items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        files.append((name, tmp_path / f"{name}.csv"))
    reg.add_dataset("staff", files, Policy(2.5, delta), uid="uid")
    return reg


def _analyst_sql(app_test, monkeypatch, epsilon: str):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test(SQL).run()
    at.selectbox(key="dpsql_dataset").set_value("staff").run()
    query = at.text_area(key="dpsql_query").value.replace("epsilon = 1", f"epsilon = {epsilon}")
    at.text_area(key="dpsql_query").set_value(query).run()
    return at


def _confirm(at):
    return next(c for c in at.checkbox if c.key.startswith("dpsql_run::confirm"))


def test_a_confirmation_triggered_by_delta_says_delta(
    app_test, registry_dir, tmp_path, monkeypatch
):
    _staff(registry_dir, tmp_path, 2e-5)
    at = _analyst_sql(app_test, monkeypatch, "0.5")  # ε 0.5 of 2.5 (20 %), δ 1e-5 of 2e-5
    assert at.button(key="dpsql_run").disabled
    label = _confirm(at).label
    assert "spend δ 1e-05 of the 2e-05 remaining (50%)" in label, label
    assert "ε" not in label  # ε's share did not trigger it
    assert any("remaining δ" in w.value for w in at.warning)


def test_a_confirmation_triggered_by_both_states_both(
    app_test, registry_dir, tmp_path, monkeypatch
):
    _staff(registry_dir, tmp_path, 2e-5)
    at = _analyst_sql(app_test, monkeypatch, "1")
    label = _confirm(at).label
    assert "ε 1 of the 2.5 remaining (40%) and δ 1e-05 of the 2e-05 remaining (50%)" in label


def test_once_delta_is_spent_the_refusal_names_delta(app_test, registry_dir, tmp_path, monkeypatch):
    reg = _staff(registry_dir, tmp_path, 1e-5)
    at = _analyst_sql(app_test, monkeypatch, "0.5")
    _confirm(at).check().run()
    at.button(key="dpsql_run").click().run()
    assert reg.spent("staff") == pytest.approx((0.5, 1e-5))
    # the next click: δ has nothing left — said before the click, with the fix, not a
    # confirmation of a share
    (warning,) = [w.value for w in at.warning if "would be refused" in w.value]
    assert "delta is spent" in warning and "lower epsilon" not in warning
    assert not any(c.key.startswith("dpsql_run::confirm") for c in at.checkbox)
    at.button(key="dpsql_run").click().run()  # clicked anyway: refused, recorded
    refused = [e.value for e in at.error if "Refused" in e.value]
    assert refused and "delta is spent" in refused[0], [e.value for e in at.error]
    assert "lower epsilon" not in refused[0]
    assert reg.spent("staff") == pytest.approx((0.5, 1e-5))


def test_pp_once_delta_is_spent_says_delta_and_how_to_publish(
    app_test, registry_dir, tmp_path, monkeypatch
):
    """PP without declared categories needs δ: after a release spent δ, the page says before
    the click that δ is spent (ε fits) and names the release that needs none."""
    from core.balancing.demos import DEMOS as PP_DEMOS
    from core.balancing.demos import PATIENTS_NAME
    from core.privacy import Cost

    monkeypatch.setenv("DPX_MODE", "analyst")
    patients = next(d for d in PP_DEMOS if d.name == PATIENTS_NAME).load()
    patients.to_csv(tmp_path / "p.csv", index=False)
    reg = Registry(registry_dir)
    reg.add_dataset("patients", [("patients", tmp_path / "p.csv")], Policy(5.0, 1e-5))
    reg.charge("sql", "patients", {}, Cost(0.285, 1e-5), "secure")  # a default DP SQL query
    at = app_test("pages/pp_balancing.py").run()
    at.selectbox(key="pp_sa_registered:patients").set_value("Disease")
    at.text_input(key="pp_rho1_registered:patients").set_value("1/5").run()
    at.radio(key="pp_missing").set_value("drop those records").run()
    (warning,) = [w.value for w in at.warning if "would be refused" in w.value]
    assert "delta is spent" in warning and "fits" in warning and "lower epsilon" not in warning
    assert "PP with the owner's declared categories" in warning
    at.button(key="pp_publish").click().run()
    refused = [e.value for e in at.error if "Refused" in e.value]
    assert refused and "delta is spent" in refused[0]


def test_plan_step_plans_count_star(app_test, registry_dir):
    """Issue 28 item 3: Plan on the DP SQL page covers COUNT(*) without contribution bounds
    (before: "'stops' (IMPLICIT_COUNT_ROWS) has no public half-width")."""
    at = app_test(SQL, timeout=120)
    at.run()
    at.session_state["dpsql_plan_open"] = True
    at.run()
    text = (
        "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, "
        "max_groups_contributed = 1) dept, COUNT(*) AS stops FROM Employee GROUP BY dept"
    )
    at.text_area(key="dpsql_query").set_value(text).run()
    at.text_area(key="dpsql_plan_targets").set_value("stops=20").run()
    at.button(key="dpsql_plan_run").click().run()
    refused = [e.value for e in at.error if "half-width" in e.value or "IMPLICIT" in e.value]
    assert not at.exception and not refused, refused
    (success,) = at.success
    assert (
        "stops within ±20" in success.value
        and "(COUNT(*), no contribution bounds)" in success.value
    )
    shown = " ".join([success.value, *(str(d.value) for d in at.dataframe)])
    assert "IMPLICIT_COUNT" not in shown
